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
}
