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
