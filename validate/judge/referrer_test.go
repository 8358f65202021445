package judge

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viewcount/viewcount"
)

func TestSpamReferrers(t *testing.T) {
	s, err := newSpamReferrers([]string{"Spam.Example"}, false)
	if err != nil {
		t.Fatal(err)
	}
	f := func(ref string, want bool) {
		t.Helper()
		if got := s.match(ref) != ""; got != want {
			t.Errorf("match(%q) = %v, want %v", ref, got, want)
		}
	}
	f("https://semalt.com/", true)
	f("http://semalt.com", true)
	f("https://x.semalt.com/crawler.php", true) // a subdomain
	f("http://forum.topic31342700.darodar.com/", true)
	f("https://SEMALT.COM/", true)
	f("https://semalt.com.:443/", true) // trailing dot and port
	f("https://user@semalt.com/", true)
	f("semalt.com/x", true) // no scheme
	f("https://spam.example/a", true)
	f("https://www.spam.example", true) // the configured host, extended
	f("https://notsemalt.com/", false)  // not a parent domain
	f("https://semalt.com.evil.net/", false)
	f("https://semalt.co/", false)
	f("https://example.com/?ref=semalt.com", false)
	f("https://www.google.com/", false)
	f("https://[2001:db8::1]:8080/", false)
	f("", false)

	r, err := newSpamReferrers([]string{"only.example"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if r.match("https://semalt.com/") != "" || r.match("https://a.only.example/") != "only.example" {
		t.Error("ReplaceSpamReferrers: the built-in list still applies, or the given one does not")
	}
	for _, bad := range []string{"", "https://semalt.com/", "semalt.com/path", "semalt.com:80", "a b"} {
		if _, err := newSpamReferrers([]string{bad}, false); err == nil {
			t.Errorf("spam referrer %q: no error", bad)
		}
	}
}

// TestDefaultSpamReferrers: the embedded list parses and has the entries
// the docs promise.
func TestDefaultSpamReferrers(t *testing.T) {
	hosts, err := parseHosts(strings.NewReader(defaultSpamReferrers), "lists/referrer-spam.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(hosts) < 40 {
		t.Errorf("the built-in list has %d hosts", len(hosts))
	}
	s, _ := newSpamReferrers(nil, false)
	for _, h := range []string{"semalt.com", "buttons-for-website.com", "darodar.com", "best-seo-offer.com",
		"ilovevitaly.com", "priceg.com", "blackhatworth.com", "hulfingtonpost.com", "o-o-6-o-o.com"} {
		if s.match("https://"+h+"/") != h {
			t.Errorf("%s is not on the built-in list", h)
		}
	}
}

func TestLoadHosts(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "spam.txt")
	os.WriteFile(good, []byte("# house list\n\nSpam.Example\n  other.example.  \n# end\n"), 0o644)
	got, err := LoadHosts(good)
	if err != nil {
		t.Fatal(err)
	}
	if want := "spam.example|other.example"; strings.Join(got, "|") != want {
		t.Errorf("LoadHosts = %q, want %q", got, want)
	}
	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("# c\nfine.example\n\nhttps://semalt.com/\n"), 0o644)
	if _, err := LoadHosts(bad); err == nil || !strings.Contains(err.Error(), "bad.txt:4:") {
		t.Errorf("LoadHosts(bad) err = %v, want one naming line 4", err)
	}
	if _, err := LoadHosts(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestJudgeSpamReferrer(t *testing.T) {
	r := newTestRules(t, Config{SpamReferrers: []string{"spam.example"}})
	f := func(ref string, want viewcount.Reason) {
		t.Helper()
		e := viewcount.Event{Time: t0, Site: "example.com", Page: "/" + ref, UA: uaFirefoxWin, Referrer: ref}
		if got := r.Judge(&e); got != want {
			t.Errorf("referrer %q: %s, want %s", ref, got, want)
		}
	}
	f("https://semalt.com/", viewcount.BadReferrer)
	f("https://spam.example/x", viewcount.BadReferrer)
	f("https://news.ycombinator.com/", viewcount.Valid)
	f("", viewcount.Valid)
}

// TestReplaceBotList: with ReplaceBotList only the configured patterns
// decide.
func TestReplaceBotList(t *testing.T) {
	r := newTestRules(t, Config{ExtraBotPatterns: []string{`acme-scanner`}, ReplaceBotList: true})
	f := func(ua string, want bool) {
		t.Helper()
		if got := r.ua.isBot(ua); got != want {
			t.Errorf("isBot(%q) = %v, want %v", ua, got, want)
		}
	}
	f("ACME-Scanner/1.0", true)
	f("curl/8.5.0", false) // built-in token, not on the replacing list
	f(uaGooglebot, false)  // Crawler-Detect, likewise
	f(uaChromeWin, false)
	r = newTestRules(t, Config{ReplaceBotList: true})
	if r.ua.isBot("curl/8.5.0") {
		t.Error("an empty replacing list still rejects curl")
	}
}
