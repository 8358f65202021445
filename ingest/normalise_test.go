package ingest

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalisePage(t *testing.T) {
	f := func(raw string, keepQuery bool, maxLen int, want string) {
		t.Helper()
		got, err := NormalisePage(raw, keepQuery, maxLen)
		if err != nil {
			t.Fatalf("NormalisePage(%q, %v, %d): %v", raw, keepQuery, maxLen, err)
		}
		if got != want {
			t.Fatalf("NormalisePage(%q, %v, %d) = %q, want %q", raw, keepQuery, maxLen, got, want)
		}
	}
	f("/", false, 0, "/")
	f("/blog/post", false, 0, "/blog/post")
	f("/blog/post/", false, 0, "/blog/post")
	f("blog/post", false, 0, "/blog/post")
	f("  /padded  ", false, 0, "/padded")
	f("//a//b///c//", false, 0, "/a/b/c")
	f("/a/./b/../c", false, 0, "/a/c")
	f("/../../etc", false, 0, "/etc")
	f("/p?utm_source=x#top", false, 0, "/p")
	f("/p/?utm_source=x", true, 0, "/p?utm_source=x")
	f("/p?", true, 0, "/p")
	f("/p#frag?x", true, 0, "/p")
	f("/caf%C3%A9", false, 0, "/café")
	f("/a%2Fb", false, 0, "/a/b")
	f("/100%", false, 0, "/100%")     // invalid escape kept literally
	f("/%zz/%4", false, 0, "/%zz/%4") // likewise
	f("/a+b", false, 0, "/a+b")       // '+' is a plus in a path
	f("https://example.com/blog/post/?x=1#y", false, 0, "/blog/post")
	f("https://user:pw@example.com:8443/a//b?q=1", true, 0, "/a/b?q=1")
	f("HTTP://Example.com", false, 0, "/")
	f("https://example.com?x=1", false, 0, "/")
	f("/redirect/https://x.test/y", false, 0, "/redirect/https:/x.test/y")
	f("/日本語/", false, 0, "/日本語")
	f("/abcdef", false, 4, "/abc")
	f("/ab/def", false, 4, "/ab") // no trailing slash after the cut
	f("/ééé", false, 4, "/é")     // é is 2 bytes: never cut inside a rune
	f("/p?q=1", true, 4, "/p?q")  // the cap covers the query
	f(strings.Repeat("/x", 400), false, 0, strings.Repeat("/x", 256))

	bad := func(raw string) {
		t.Helper()
		got, err := NormalisePage(raw, false, 0)
		if !errors.Is(err, ErrBadInput) {
			t.Fatalf("NormalisePage(%q) = %q, %v; want ErrBadInput", raw, got, err)
		}
	}
	bad("")
	bad("   ")
	bad("/a\x00b")
	bad("/a\nb")
	bad("/a\x7fb")
	bad("/a\u0085b") // C1 control
	bad("/\xff\xfe")
	bad("/a%00b")   // control after decoding
	bad("/a%0Ab")   // likewise
	bad("/a%C3")    // invalid UTF-8 after decoding
	bad("/a%ff%fe") // likewise
}

func TestNormaliseReferrer(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		if got := NormaliseReferrer(raw); got != want {
			t.Fatalf("NormaliseReferrer(%q) = %q, want %q", raw, got, want)
		}
	}
	f("https://www.google.com/", "https://www.google.com/")
	f("https://www.google.com", "https://www.google.com/")
	f("https://News.Example.COM/item?id=1#c", "https://news.example.com/item")
	f("https://user:secret@example.com/x", "https://example.com/x")
	f("http://example.com:8080/a b", "http://example.com:8080/a%20b")
	f("android-app://com.google.android.gm/", "android-app://com.google.android.gm/")
	f("", "")
	f("not a url", "")
	f("/relative/path", "")
	f("mailto:someone@example.com", "")
	f("https://exa\x00mple.com/", "")
	f("https://example.com/\xff", "")
	f("http://[::1", "")
	long := "https://example.com/" + strings.Repeat("a", 2000)
	if got := NormaliseReferrer(long); len(got) != MaxReferrerLen || !strings.HasPrefix(got, "https://example.com/aaa") {
		t.Fatalf("long referrer: %d bytes", len(got))
	}
	// A cut never leaves half an escape behind.
	esc := "https://example.com/" + strings.Repeat("%C3%A9", 400)
	if got := NormaliseReferrer(esc); len(got) > MaxReferrerLen || strings.Contains(got[len(got)-2:], "%") {
		t.Fatalf("escaped referrer cut badly: ...%q", got[len(got)-8:])
	}
}

func TestNormaliseUA(t *testing.T) {
	f := func(raw, want string) {
		t.Helper()
		if got := normaliseUA(raw); got != want {
			t.Fatalf("normaliseUA(%q) = %q, want %q", raw, got, want)
		}
	}
	f("Mozilla/5.0 (X11)", "Mozilla/5.0 (X11)")
	f("", "")
	f("bad\xffbyte", "badbyte")
	f(strings.Repeat("a", 600), strings.Repeat("a", MaxUALen))
	f(strings.Repeat("a", 511)+"é", strings.Repeat("a", 511))
}

func FuzzNormalisePage(f *testing.F) {
	for _, s := range []string{"/", "/a/b/", "https://x.test/a?b#c", "//a//b", "/%C3%A9", "/100%", "/a/../b", "\x00", "/é"} {
		f.Add(s, false, 0)
		f.Add(s, true, 8)
	}
	f.Fuzz(func(t *testing.T, raw string, keepQuery bool, maxLen int) {
		got, err := NormalisePage(raw, keepQuery, maxLen)
		if err != nil {
			if !errors.Is(err, ErrBadInput) {
				t.Fatalf("error not ErrBadInput: %v", err)
			}
			return
		}
		limit := maxLen
		if limit <= 0 {
			limit = DefaultMaxPageLen
		}
		if !strings.HasPrefix(got, "/") || !utf8.ValidString(got) || checkText(got) != nil {
			t.Fatalf("NormalisePage(%q) = %q: not a clean path", raw, got)
		}
		if len(got) > limit && len(got) > 1 {
			t.Fatalf("NormalisePage(%q) = %d bytes, cap %d", raw, len(got), limit)
		}
		p, _, hasQuery := strings.Cut(got, "?")
		if strings.Contains(p, "//") || (!keepQuery && hasQuery) || strings.Contains(got, "#") && !keepQuery {
			t.Fatalf("NormalisePage(%q, %v) = %q", raw, keepQuery, got)
		}
	})
}

func FuzzNormaliseReferrer(f *testing.F) {
	for _, s := range []string{"https://www.google.com/", "https://u:p@x.test/a?b#c", "http://[::1]:80/", "x", "android-app://a.b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := NormaliseReferrer(raw)
		if got == "" {
			return
		}
		if len(got) > MaxReferrerLen || !utf8.ValidString(got) || checkText(got) != nil {
			t.Fatalf("NormaliseReferrer(%q) = %q", raw, got)
		}
		if strings.ContainsAny(got, "?#@") && !strings.Contains(raw, "@") {
			t.Fatalf("NormaliseReferrer(%q) = %q keeps query or fragment", raw, got)
		}
		if !strings.Contains(got, "://") {
			t.Fatalf("NormaliseReferrer(%q) = %q: not absolute", raw, got)
		}
	})
}
