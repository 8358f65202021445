package viewcount

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheckHostnames(t *testing.T) {
	f := func(in []string, want string) {
		t.Helper()
		got, err := CheckHostnames(in)
		if strings.HasPrefix(want, "error: ") {
			if !errors.Is(err, ErrBadHostname) || !strings.Contains(err.Error(), strings.TrimPrefix(want, "error: ")) {
				t.Errorf("CheckHostnames(%q) = %q, %v; want %s", in, got, err, want)
			}
			return
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("CheckHostnames(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	f([]string{"example.com"}, "example.com")
	f([]string{" Example.COM. ", "*.Example.com", "example.com"}, "example.com *.example.com")
	f([]string{"*"}, "*")
	f([]string{"example-com.translate.goog", "amp.example.org"}, "example-com.translate.goog amp.example.org")
	f([]string{"xn--bcher-kva.example"}, "xn--bcher-kva.example")
	f(nil, "error: at least one")
	f([]string{"localhost"}, "error: single label")
	f([]string{"app.localhost"}, "error: localhost")
	f([]string{"*.localhost"}, "error: single label")
	f([]string{"127.0.0.1"}, "error: IP address")
	f([]string{"::1"}, "error: no scheme, port or path")
	f([]string{"[::1]"}, "error: no scheme, port or path")
	f([]string{"example.com:8080"}, "error: no scheme, port or path")
	f([]string{"https://example.com"}, "error: no scheme, port or path")
	f([]string{"example.com/blog"}, "error: no scheme, port or path")
	f([]string{"*.com"}, "error: single label")
	f([]string{"*example.com"}, "error: wildcard")
	f([]string{"a.*.example.com"}, "error: wildcard")
	f([]string{"**.example.com"}, "error: wildcard")
	f([]string{"exa mple.com"}, "error: no scheme")
	f([]string{"bücher.example"}, "error: not a host name")
	f([]string{"a_b.example"}, "error: underscore")
	f([]string{""}, "error: not a host name")
	f([]string{"ok.example", "1.2.3.4"}, "error: [1]")
	f(slices.Repeat([]string{"a.example"}, MaxHostnames+1), "error: at most 32")
}

func TestHostAllowed(t *testing.T) {
	f := func(list []string, host string, want bool) {
		t.Helper()
		if got := HostAllowed(list, host); got != want {
			t.Errorf("HostAllowed(%q, %q) = %v, want %v", list, host, got, want)
		}
	}
	def := DefaultHostnames("example.com")
	f(def, "example.com", true)
	f(def, "www.example.com", true)
	f(def, "a.b.example.com", true)
	f(def, "notexample.com", false)
	f(def, "example.com.evil.test", false)
	f(def, "localhost", false)
	f(def, "127.0.0.1", false)
	f(def, "", false)
	f(def, ".example.com", false)
	f([]string{"*.example.com"}, "example.com", false)
	f([]string{"*"}, "anything.test", true)
	f(nil, "example.com", false)
	f(DefaultHostnames("www.example.com"), "example.com", true)
	f(DefaultHostnames("www.example.com"), "shop.example.com", true)
	f(DefaultHostnames("blog.example.com"), "example.com", false)
	if got := DefaultHostnames("www.com"); !slices.Equal(got, []string{"www.com", "*.www.com"}) {
		t.Errorf("DefaultHostnames(www.com) = %q", got)
	}
}

// FuzzCheckHostnames: whatever an operator sends, what is accepted is in
// the allow-listed syntax (lower-case letters, digits, '-' and '.', an
// optional leading "*.", or "*" alone), is stable under a second check,
// and matches itself (or, for a wildcard, a subdomain of it).
func FuzzCheckHostnames(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "*", "EXAMPLE.com.", "a..b", "localhost", "1.2.3.4", "x:1", "*.*.a.b", "a.b\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CheckHostnames([]string{raw})
		if err != nil {
			if !errors.Is(err, ErrBadHostname) {
				t.Fatalf("%q: error %v does not wrap ErrBadHostname", raw, err)
			}
			return
		}
		h := got[0]
		name := strings.TrimPrefix(h, "*.")
		if h != AnyHost {
			for i := 0; i < len(name); i++ {
				if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
					t.Fatalf("%q accepted as %q: byte %q outside the allow-list", raw, h, c)
				}
			}
			if !strings.Contains(name, ".") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") {
				t.Fatalf("%q accepted as %q: not a multi-label name", raw, h)
			}
		}
		again, err := CheckHostnames(got)
		if err != nil || !slices.Equal(again, got) {
			t.Fatalf("%q → %q → %q, %v: not stable", raw, got, again, err)
		}
		probe := name
		if h != name {
			probe = "x." + name
		}
		if !HostAllowed(got, probe) {
			t.Fatalf("%q does not allow %q", h, probe)
		}
	})
}

func BenchmarkHostAllowed(b *testing.B) {
	list := DefaultHostnames("example.com")
	for b.Loop() {
		if !HostAllowed(list, "blog.example.com") || HostAllowed(list, "fraud.test") {
			b.Fatal("wrong")
		}
	}
}
