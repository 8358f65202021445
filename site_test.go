package viewcount

import (
	"errors"
	"strings"
	"testing"
)

func TestNormaliseSite(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got, err := NormaliseSite(in)
		if want == "" {
			if !errors.Is(err, ErrBadSite) {
				t.Errorf("NormaliseSite(%q) = %q, %v; want ErrBadSite", in, got, err)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("NormaliseSite(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	f("example.com", "example.com")
	f(" Example.COM. ", "example.com")
	f("example.com:8080", "example.com")
	f("blog.example.co.uk", "blog.example.co.uk")
	f("localhost", "localhost")
	f("xn--bcher-kva.example", "xn--bcher-kva.example")
	f("", "")
	f(".", "")
	f("a..b", "")
	f("-a.com", "")
	f("exa mple.com", "")
	f("bücher.example", "")
	f("a.com/x", "")
	f("a\x00.com", "")
	f(strings.Repeat("a.", 130)+"com", "")
	f("a..", "")
	f("a.b.", "a.b")
	f("a-.com", "")
	f("a_b.example", "a_b.example")
	f(strings.Repeat("a", 63)+".com", strings.Repeat("a", 63)+".com")
	f(strings.Repeat("a", 64)+".com", "")
}

// TestCheckRegistrable: a site is registered only under a public-looking
// host name (localhost, 127.0.0.1 and _.test would let local or scanned
// traffic count), while NormaliseSite, used on every hit, keeps accepting
// them.
func TestCheckRegistrable(t *testing.T) {
	f := func(in, want, why string) {
		t.Helper()
		got, err := CheckRegistrable(in)
		if want == "" {
			if !errors.Is(err, ErrBadSite) || !strings.Contains(err.Error(), why) {
				t.Errorf("CheckRegistrable(%q) = %q, %v; want ErrBadSite with %q", in, got, err, why)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("CheckRegistrable(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	f("example.com", "example.com", "")
	f(" Example.COM.:443", "example.com", "")
	f("blog.example.co.uk", "blog.example.co.uk", "")
	f("xn--bcher-kva.example", "xn--bcher-kva.example", "")
	f("a.test", "a.test", "")
	f("1.2.3.example", "1.2.3.example", "")
	f("123.com", "123.com", "")
	f("x1-2.io", "x1-2.io", "")
	f("localhost", "", "single label")
	f("LOCALHOST.", "", "single label")
	f("com", "", "single label")
	f("app.localhost", "", "localhost")
	f("127.0.0.1", "", "IP address")
	f("127.0.0.1:8080", "", "number")
	f("10.1", "", "number")
	f("::1", "", "IP address")
	f("[::1]", "", "IP address")
	f("[2001:db8::1]:443", "", "host name")
	f("2001:db8::1", "", "IP address")
	f("_.test", "", "underscore")
	f("a_b.example", "", "underscore")
	f("-a.example", "", "host name")
	f("a-.example", "", "host name")
	f("a..example", "", "host name")
	f("", "", "host name")
	f("bücher.example", "", "host name")
	for _, s := range []string{"localhost", "127.0.0.1", "_.test"} {
		if _, err := NormaliseSite(s); err != nil {
			t.Errorf("NormaliseSite(%q): %v; ingest records such hits as unknown_site", s, err)
		}
	}
}

func TestNormaliseSiteAllocs(t *testing.T) {
	n := testing.AllocsPerRun(100, func() {
		if _, err := NormaliseSite("blog.example.co.uk"); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("NormaliseSite of a normal site: %v allocs, want 0", n)
	}
}

func BenchmarkNormaliseSite(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NormaliseSite("blog.example.co.uk"); err != nil {
			b.Fatal(err)
		}
	}
}
