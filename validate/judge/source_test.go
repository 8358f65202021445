package judge

import (
	"strconv"
	"strings"
	"testing"

	"github.com/viewcount/viewcount"
)

func TestDefaultReferrerSources(t *testing.T) {
	s, err := newSources()
	if err != nil {
		t.Fatal(err)
	}
	if len(s.exact) < 60 || len(s.wild) < 4 {
		t.Fatalf("%d hosts, %d wildcards: the list did not load", len(s.exact), len(s.wild))
	}
}

func TestReferrerSourcesListErrors(t *testing.T) {
	f := func(list, want string) {
		t.Helper()
		s := &sources{exact: map[string]string{}, wild: map[string]string{}}
		err := s.parse(strings.NewReader(list), "test.txt")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", list, err, want)
		}
	}
	f("Google google.com", `test.txt:1: want "Name: host host ..."`)
	f("# c\nGoogle:", `test.txt:2: want`)
	f("Google: https://google.com/", `"https://google.com/": want a host name`)
	f("Google: www.google.com", `"www.google.com": want a host name`)
	f("A: a.com\nB: a.com", `test.txt:2: "a.com" is listed for A already`)
}

func TestReferrerDims(t *testing.T) {
	s, err := newSources()
	if err != nil {
		t.Fatal(err)
	}
	f := func(site, referrer, host, source string) {
		t.Helper()
		e := viewcount.Event{Site: site, Referrer: referrer}
		if h, src := s.referrerDims(&e); h != host || src != source {
			t.Errorf("site %s, referrer %q: got (%q, %q), want (%q, %q)", site, referrer, h, src, host, source)
		}
	}
	const site = "example.com"
	f(site, "", "", "(direct)")
	// Internal: the site itself, with www., a subdomain; not a look-alike.
	f(site, "https://example.com/a", "", "(direct)")
	f(site, "https://www.example.com/", "", "(direct)")
	f(site, "https://blog.example.com/post", "", "(direct)")
	f("www.example.com", "https://example.com/", "", "(direct)")
	f(site, "https://example.com.evil.test/", "example.com.evil.test", "example.com.evil.test")
	f(site, "https://notexample.com/", "notexample.com", "notexample.com")
	// Search engines, with country variants and subdomains.
	f(site, "https://www.google.com/", "google.com", "Google")
	f(site, "https://www.google.co.uk/", "google.co.uk", "Google")
	f(site, "https://www.google.de/", "google.de", "Google")
	f(site, "https://www.google.com.br/search", "google.com.br", "Google")
	f(site, "https://news.google.com/", "news.google.com", "Google")
	f(site, "android-app://com.google.android.googlequicksearchbox/", "com.google.android.googlequicksearchbox", "Google")
	f(site, "https://google.blogspot.com/", "google.blogspot.com", "google.blogspot.com") // not an ICANN suffix
	f(site, "https://www.bing.com/", "bing.com", "Bing")
	f(site, "https://duckduckgo.com/", "duckduckgo.com", "DuckDuckGo")
	f(site, "https://yandex.ru/", "yandex.ru", "Yandex")
	f(site, "https://yandex.com.tr/", "yandex.com.tr", "Yandex")
	f(site, "https://www.baidu.com/link", "baidu.com", "Baidu")
	f(site, "https://www.ecosia.org/", "ecosia.org", "Ecosia")
	f(site, "https://search.brave.com/", "search.brave.com", "Brave Search")
	f(site, "https://www.startpage.com/", "startpage.com", "Startpage")
	f(site, "https://www.qwant.com/", "qwant.com", "Qwant")
	f(site, "https://search.yahoo.com/", "search.yahoo.com", "Yahoo")
	f(site, "https://uk.search.yahoo.com/", "uk.search.yahoo.com", "Yahoo")
	f(site, "https://search.yahoo.co.jp/", "search.yahoo.co.jp", "Yahoo")
	// Social networks.
	f(site, "https://m.facebook.com/", "m.facebook.com", "Facebook")
	f(site, "https://l.facebook.com/l.php", "l.facebook.com", "Facebook")
	f(site, "https://l.instagram.com/", "l.instagram.com", "Instagram")
	f(site, "https://t.co/abc", "t.co", "X")
	f(site, "https://twitter.com/", "twitter.com", "X")
	f(site, "https://x.com/", "x.com", "X")
	f(site, "https://www.linkedin.com/", "linkedin.com", "LinkedIn")
	f(site, "https://lnkd.in/xyz", "lnkd.in", "LinkedIn")
	f(site, "https://old.reddit.com/r/golang", "old.reddit.com", "Reddit")
	f(site, "https://out.reddit.com/", "out.reddit.com", "Reddit")
	f(site, "https://m.youtube.com/", "m.youtube.com", "YouTube")
	f(site, "https://youtu.be/x", "youtu.be", "YouTube")
	f(site, "https://www.tiktok.com/", "tiktok.com", "TikTok")
	f(site, "https://www.pinterest.co.uk/", "pinterest.co.uk", "Pinterest")
	f(site, "https://news.ycombinator.com/item", "news.ycombinator.com", "Hacker News")
	f(site, "https://bsky.app/profile/x", "bsky.app", "Bluesky")
	f(site, "https://l.threads.com/", "l.threads.com", "Threads")
	f(site, "https://mastodon.social/@x", "mastodon.social", "mastodon.social") // Mastodon: the host
	// Webmail.
	f(site, "https://mail.google.com/mail/u/0/", "mail.google.com", "Gmail")
	f(site, "android-app://com.google.android.gm/", "com.google.android.gm", "Gmail")
	f(site, "https://outlook.live.com/", "outlook.live.com", "Outlook")
	f(site, "https://outlook.office.com/", "outlook.office.com", "Outlook")
	f(site, "https://mail.yahoo.com/", "mail.yahoo.com", "Yahoo Mail")
	f(site, "https://mail.proton.me/", "mail.proton.me", "Proton")
	// AI assistants.
	f(site, "https://chatgpt.com/", "chatgpt.com", "ChatGPT")
	f(site, "https://chat.openai.com/", "chat.openai.com", "ChatGPT")
	f(site, "https://www.perplexity.ai/", "perplexity.ai", "Perplexity")
	f(site, "https://claude.ai/", "claude.ai", "Claude")
	f(site, "https://gemini.google.com/app", "gemini.google.com", "Gemini")
	f(site, "https://copilot.microsoft.com/", "copilot.microsoft.com", "Copilot")
	f(site, "https://chat.deepseek.com/", "chat.deepseek.com", "DeepSeek")
	// Hosts as ingest might send them: a port, upper case, a trailing dot.
	f(site, "https://WWW.Reddit.COM:443/", "reddit.com", "Reddit")
	f(site, "https://news.test./a", "news.test", "news.test")
	f(site, "https://news.test:8443/a", "news.test", "news.test")
}

// TestSourcesMemoBounded: the memo holds at most refCacheSize hosts, and
// answers stay right across generations.
func TestSourcesMemoBounded(t *testing.T) {
	s, err := newSources()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * refCacheSize {
		h := "host" + strings.Repeat("x", i%7) + "." + string(rune('a'+i%26)) + "-" + strconv.Itoa(i) + ".test"
		if got := s.source(h); got != h {
			t.Fatalf("source(%q) = %q", h, got)
		}
		if got := s.source("google.de"); got != "Google" {
			t.Fatalf("after %d hosts: google.de is %q", i, got)
		}
	}
	if n := len(s.cur) + len(s.prev); n > refCacheSize {
		t.Fatalf("memo holds %d hosts, cap %d", n, refCacheSize)
	}
}

// BenchmarkReferrerDims: a memoised host (every repeat) and a host the
// memo has not seen (the list walk and the public-suffix lookup).
func BenchmarkReferrerDims(b *testing.B) {
	s, err := newSources()
	if err != nil {
		b.Fatal(err)
	}
	e := viewcount.Event{Site: "example.com", Referrer: "https://www.google.co.uk/"}
	b.Run("memoised", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = s.referrerDims(&e)
		}
	})
	b.Run("lookup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = s.lookup("news.google.co.uk")
		}
	})
}

// TestSourceKinds: every source the list names has a kind from its
// section, so a new section is a decision about channels, not a silent
// "Referral".
func TestSourceKinds(t *testing.T) {
	kinds, err := SourceKinds()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"Google": "search", "DuckDuckGo": "search", "Reddit": "social", "Hacker News": "social",
		"X": "social", "Gmail": "email", "Proton": "email", "ChatGPT": "ai", "Gemini": "ai"} {
		if kinds[name] != want {
			t.Errorf("%s: %q, want %q", name, kinds[name], want)
		}
	}
	s, _ := newSources()
	names := map[string]bool{}
	for _, m := range []map[string]string{s.exact, s.wild} {
		for _, n := range m {
			names[n] = true
		}
	}
	if len(names) != len(kinds) {
		t.Errorf("%d sources listed, %d with a kind", len(names), len(kinds))
	}
}
