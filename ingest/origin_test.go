package ingest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHostOfURL(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := hostOfURL(in); got != want {
			t.Errorf("hostOfURL(%q) = %q, want %q", in, got, want)
		}
	}
	f("https://blog.example.com/a/b?q=1#x", "blog.example.com")
	f("http://www.example.com:44209/", "www.example.com")
	f("http://www.example.com:44209", "www.example.com") // an Origin header
	f("HTTPS://Example.COM./", "example.com")
	f("http://localhost:3000/", "localhost")
	f("http://127.0.0.1:8080/x", "127.0.0.1")
	f("http://[::1]:8080/", "::1")
	f("http://[2001:DB8::1]/", "2001:db8::1")
	f("http://user:pw@example.com/", "example.com")
	f("http://a_b.example/", "a_b.example")
	f("file:///tmp/x.html", "")
	f("chrome-extension://abc/", "")
	f("null", "")
	f("", "")
	f("http://", "")
	f("http:///path", "")
	f("http://exa mple.com/", "")
	f("http://bücher.example/", "")
	f("http://[::1", "")
	f("http://[::1]x/", "")
	f("http://[example.com]/", "")
	f("http://"+strings.Repeat("a", 254)+"/", "")
	f("//example.com/", "")
	f("http://a..b/", "")
	f("http://.a/", "")
	f("example.com", "")
}

func TestTrackerHost(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := trackerHost(in); got != want {
			t.Errorf("trackerHost(%q) = %q, want %q", in, got, want)
		}
	}
	f("www.example.com", "www.example.com")
	f("Example.com.", "example.com")
	f("[::1]", "::1")
	f("::1", "")
	f("example.com:80", "")
	f("a/b", "")
	f("", "")
}

// TestPageOrigin: the page host an event carries, through the handlers
// into the stream. The browser's headers win over what the tracker
// reports; Origin "null" and a stripped Referer say nothing, so the
// tracker's report stands; a request saying nothing has no origin (no
// evidence, never a foreign one).
func TestPageOrigin(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	send := func(req *http.Request, hdr ...string) {
		t.Helper()
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		if w := srv.do(req); w.Code != http.StatusOK && w.Code != http.StatusAccepted {
			t.Fatalf("%s %s: %d %s", req.Method, req.URL, w.Code, w.Body)
		}
	}
	pixel := func(page string, hdr ...string) {
		t.Helper()
		send(httptest.NewRequest(http.MethodGet, "/p.gif?site=example.com&page="+page, nil), hdr...)
	}
	beacon := func(body string, hdr ...string) {
		t.Helper()
		req := httptest.NewRequest(http.MethodPost, "/v1/events", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		send(req, hdr...)
	}
	pixel("/1", "Referer", "https://Blog.Example.com:8443/post?q=1")
	pixel("/2")
	pixel("/3&host=www.example.com")
	pixel("/4&host=www.example.com", "Referer", "http://fraud.test/")
	beacon(`{"site":"example.com","page":"/5","host":"www.example.com"}`, "Origin", "http://fraud.test:8080", "Referer", "http://fraud.test:8080/x")
	beacon(`{"site":"example.com","page":"/6","host":"www.example.com"}`, "Origin", "null")
	beacon(`{"site":"example.com","page":"/7"}`, "Origin", "null")
	beacon(`{"site":"example.com","page":"/8"}`, "Referer", "http://localhost:3000/")
	// The slow path (an escape) reads the host too.
	beacon(`[{"site":"example.com","page":"/9","host":"sh\u006fp.example.com"}]`)
	beacon(`{"site":"example.com","page":"/10","host":"evil.test/x"}`)
	want := map[string]string{"/1": "blog.example.com", "/2": "", "/3": "www.example.com", "/4": "fraud.test",
		"/5": "fraud.test", "/6": "www.example.com", "/7": "", "/8": "localhost", "/9": "shop.example.com", "/10": ""}
	got := map[string]string{}
	for _, e := range pub.events() {
		got[e.Page] = e.Origin
	}
	for page, w := range want {
		if g, ok := got[page]; !ok || g != w {
			t.Errorf("%s: origin %q (recorded %v), want %q", page, g, ok, w)
		}
	}
}

// FuzzPageOrigin: whatever a client puts in Origin, Referer or the
// tracker's host, an event's origin is "" or a host in the allow-listed
// form the validator matches (lower case letters, digits, '-', '.', '_'
// or an IPv6 literal's ':'), at most MaxOriginLen bytes.
func FuzzPageOrigin(f *testing.F) {
	for _, s := range [][3]string{{"http://a.example:80", "", ""}, {"null", "https://B.example/x", ""}, {"", "", "c.example"},
		{"http://[::1]:1", "", ""}, {"https://x@y.example/", "", "[::1]"}, {"http://a\x00b/", "", ""}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, origin, referer, host string) {
		h := http.Header{}
		h.Set("Origin", origin)
		h.Set("Referer", referer)
		for _, got := range []string{pageOrigin(h), trackerHost(host)} {
			if len(got) > MaxOriginLen {
				t.Fatalf("%q: %d bytes", got, len(got))
			}
			for i := 0; i < len(got); i++ {
				if c := got[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == ':') {
					t.Fatalf("(%q, %q, %q) → %q: byte %q outside the allow-list", origin, referer, host, got, c)
				}
			}
			if strings.HasSuffix(got, ".") {
				t.Fatalf("%q keeps its trailing dot", got)
			}
		}
	})
}
