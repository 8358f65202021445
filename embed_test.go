package viewcount

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheckEmbedOrigins(t *testing.T) {
	got, err := CheckEmbedOrigins([]string{"https://Blog.Example.com/", "http://localhost:8080", "https://blog.example.com:443", "https://news.example"})
	if want := []string{"http://localhost:8080", "https://blog.example.com", "https://news.example"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("got %q %v, want %q", got, err, want)
	}
	for _, bad := range []string{"", "blog.example.com", "*", "https://*.example.com", "javascript:alert(1)", "data:text/html,x",
		"https://a.example/path", "https://a.example?x=1", "https://a.example#x", "https://u:p@a.example", "ftp://a.example",
		"https://a.example; script-src *", "https://a.example https://b.example", "https://a.example,https://b.example",
		"https://[::1]:8080", "https://a.example:0", "https://a.example:99999", "'self'", "https://a..example", "https://-a.example"} {
		if o, err := CheckEmbedOrigins([]string{bad}); !errors.Is(err, ErrBadEmbedOrigin) {
			t.Errorf("%q: %q %v, want ErrBadEmbedOrigin", bad, o, err)
		}
	}
	if _, err := CheckEmbedOrigins(make([]string, MaxEmbedOrigins+1)); !errors.Is(err, ErrBadEmbedOrigin) {
		t.Errorf("%d origins: %v", MaxEmbedOrigins+1, err)
	}
}

// FuzzEmbedOrigins: whatever is given, an accepted origin is one CSP
// source expression of the allowed characters, scheme first, and checking
// it again gives itself.
func FuzzEmbedOrigins(f *testing.F) {
	for _, s := range []string{"https://a.example", "http://a.example:8080/", "https://a.example; x", "https://a.example\t", "https://A.EXAMPLE.", "http://1.2.3.4:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := CheckEmbedOrigins([]string{s})
		if err != nil {
			return
		}
		o := out[0]
		if !strings.HasPrefix(o, "https://") && !strings.HasPrefix(o, "http://") ||
			strings.ContainsFunc(o, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune(".:/-_", r))
			}) ||
			strings.Count(o, "/") != 2 {
			t.Fatalf("%q: accepted as %q", s, o)
		}
		if again, err := CheckEmbedOrigins(out); err != nil || !slices.Equal(again, out) {
			t.Fatalf("%q: %q checks again as %q %v", s, o, again, err)
		}
	})
}
