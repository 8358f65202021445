package dashboard

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	h.Routes(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var refRE = regexp.MustCompile(`(?:src|href)="([^"]+)"`)

// TestPage checks the page's headers and that every file it names is served
// from this origin, with its type and a validator for caching.
func TestPage(t *testing.T) {
	srv := newServer(t)
	resp, body := get(t, srv.URL+"/dashboard/example.com")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	want := map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
		"X-Content-Type-Options":  "nosniff",
		"Cache-Control":           "no-cache",
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if strings.Contains(body, "{{version}}") || strings.Contains(body, "<script>") || strings.Contains(body, "style=") {
		t.Error("page has an unfilled version, an inline script or an inline style")
	}
	refs := refRE.FindAllStringSubmatch(body, -1)
	types := map[string]string{}
	for _, m := range refs {
		ref := m[1]
		if ref == "data:," { // the empty favicon: no request at all
			continue
		}
		if !strings.HasPrefix(ref, StaticPrefix) {
			t.Errorf("page refers to %q, outside %s", ref, StaticPrefix)
			continue
		}
		r, b := get(t, srv.URL+ref)
		if r.StatusCode != 200 || len(b) == 0 {
			t.Errorf("%s: status %d, %d bytes", ref, r.StatusCode, len(b))
			continue
		}
		name := strings.SplitN(strings.TrimPrefix(ref, StaticPrefix), "?", 2)[0]
		types[name] = r.Header.Get("Content-Type")
		if r2, _ := get(t, srv.URL+ref, "If-None-Match", r.Header.Get("ETag")); r2.StatusCode != http.StatusNotModified {
			t.Errorf("%s with its ETag: status %d, want 304", ref, r2.StatusCode)
		}
	}
	wantTypes := map[string]string{
		"app.js": "text/javascript; charset=utf-8", "render.js": "text/javascript; charset=utf-8",
		"vendor/uplot/uPlot.iife.min.js": "text/javascript; charset=utf-8",
		"app.css":                        "text/css; charset=utf-8", "vendor/uplot/uPlot.min.css": "text/css; charset=utf-8",
		"vendor/uplot/LICENSE": "text/plain; charset=utf-8",
		"vendor/world/VERSION": "text/plain; charset=utf-8",
	}
	// The world map's data, fetched by the page when its Map tab opens.
	for name, ct := range map[string]string{"vendor/world/countries-110m.json": "application/json", "vendor/world/codes.json": "application/json"} {
		if r, b := get(t, srv.URL+StaticPrefix+name); r.StatusCode != 200 || r.Header.Get("Content-Type") != ct || len(b) < 10_000 {
			t.Errorf("%s: %d %q, %d bytes", name, r.StatusCode, r.Header.Get("Content-Type"), len(b))
		}
	}
	for name, ct := range wantTypes {
		if types[name] != ct {
			t.Errorf("%s: Content-Type %q, want %q (referenced: %v)", name, types[name], ct, types)
		}
	}
}

// TestNoThirdParty: the page's own code names no other origin, so nothing
// but this server is ever asked for anything (the CSP would block it too).
func TestNoThirdParty(t *testing.T) {
	for _, name := range []string{"index.html", "app.js", "render.js", "app.css"} {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		// SVG's namespace is a name, never fetched (the map's elements).
		b = bytes.ReplaceAll(b, []byte("'http://www.w3.org/2000/svg'"), nil)
		if m := regexp.MustCompile(`https?:|//[a-z0-9.-]+\.[a-z]{2,}/`).Find(b); m != nil {
			t.Errorf("%s names another origin: %q", name, m)
		}
	}
}

func TestSiteNames(t *testing.T) {
	srv := newServer(t)
	f := func(path string, status int, location string) {
		t.Helper()
		resp, _ := get(t, srv.URL+path)
		if resp.StatusCode != status || resp.Header.Get("Location") != location {
			t.Errorf("GET %s = %d Location %q, want %d %q", path, resp.StatusCode, resp.Header.Get("Location"), status, location)
		}
	}
	f("/dashboard/example.com", 200, "")
	f("/dashboard/never-registered.example", 200, "") // the page does not say which sites exist
	f("/dashboard/Example.COM", 301, "/dashboard/example.com")
	f("/dashboard/exa_mple!", 400, "")
	f("/dashboard/static/nope.js", 404, "")
	f("/dashboard/static/../doc.go", 404, "")
}

// TestTextOnly: the page's scripts never write markup. Page paths,
// referrers and user agents are whatever visitors sent; put in with
// textContent (or as a property such as title) they stay text, whatever
// they hold. An API that parses HTML would make any of them an element.
func TestTextOnly(t *testing.T) {
	markup := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser|\.html\(|srcdoc`)
	for _, name := range []string{"app.js", "render.js"} {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if m := markup.Find(b); m != nil {
			t.Errorf("%s writes markup with %q: use textContent", name, m)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	f := func(header string, want bool) {
		t.Helper()
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
	f("", false)
	f("gzip", true)
	f("gzip, deflate, br, zstd", true) // Chromium's
	f("br;q=1.0, GZIP;q=0.5", true)
	f("*", true)
	f("gzip;q=0", false)
	f("gzip; q=0.000", false)
	f("deflate, br", false)
	f("identity", false)
	f("xgzip", false)
}

// TestGzip: the page and its files are gzipped for a client that takes
// it, to the same bytes, under an ETag of their own; sent as they are
// for one that does not.
func TestGzip(t *testing.T) {
	srv := newServer(t)
	for _, path := range []string{"/dashboard/example.com", StaticPrefix + "app.js", StaticPrefix + "vendor/uplot/uPlot.iife.min.js"} {
		plain, body := get(t, srv.URL+path, "Accept-Encoding", "identity")
		zipped, zbody := get(t, srv.URL+path, "Accept-Encoding", "gzip")
		if plain.Header.Get("Content-Encoding") != "" || zipped.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: Content-Encoding %q without gzip, %q with", path, plain.Header.Get("Content-Encoding"), zipped.Header.Get("Content-Encoding"))
			continue
		}
		zr, err := gzip.NewReader(strings.NewReader(zbody))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		unzipped, err := io.ReadAll(zr)
		if err != nil || string(unzipped) != body || len(zbody) >= len(body) {
			t.Errorf("%s: gzipped %d bytes to %d (%v), plain %d: want the same bytes, fewer sent", path, len(zbody), len(unzipped), err, len(body))
		}
		for _, r := range []*http.Response{plain, zipped} {
			if r.Header.Get("Vary") != "Accept-Encoding" {
				t.Errorf("%s: Vary %q", path, r.Header.Get("Vary"))
			}
		}
		if et := plain.Header.Get("ETag"); et != "" && et == zipped.Header.Get("ETag") {
			t.Errorf("%s: the gzipped and the plain body share the ETag %s", path, et)
		}
		if et := zipped.Header.Get("ETag"); et != "" {
			if r, _ := get(t, srv.URL+path, "Accept-Encoding", "gzip", "If-None-Match", et); r.StatusCode != http.StatusNotModified {
				t.Errorf("%s gzipped with its ETag: status %d, want 304", path, r.StatusCode)
			}
			if r, _ := get(t, srv.URL+path, "Accept-Encoding", "identity", "If-None-Match", et); r.StatusCode != http.StatusOK {
				t.Errorf("%s plain with the gzipped ETag: status %d, want 200", path, r.StatusCode)
			}
		}
	}
}

// TestTransferSize keeps a page load small: the page and the scripts and
// styles it loads, as a browser receives them (gzipped), ours and in all
// (uPlot is most of it). Our scripts are served without their comment
// lines (dropCommentLines). Issue 23's URL state, themes, ranges,
// shortcuts, comparison and export took ours from 17.6 to 21.7 KB, and
// its filters, tabbed cards, phone layout, embedding, comparison in every
// table, the map tab, channels, the detail view and all time to 26.2 KB (49.1 KB in
// all, uPlot included; the map's data loads with its tab); the budget
// grows with what the dashboard does, never past what a page load needs.
func TestTransferSize(t *testing.T) {
	const ownBudget, allBudget = 28_000, 52_000
	srv := newServer(t)
	_, page := get(t, srv.URL+"/dashboard/example.com", "Accept-Encoding", "gzip")
	_, plain := get(t, srv.URL+"/dashboard/example.com", "Accept-Encoding", "identity")
	own, all, raw := len(page), len(page), len(plain)
	for _, m := range refRE.FindAllStringSubmatch(plain, -1) {
		name, _, _ := strings.Cut(strings.TrimPrefix(m[1], StaticPrefix), "?")
		if !strings.HasSuffix(name, ".js") && !strings.HasSuffix(name, ".css") {
			continue // the favicon and the license link: never loaded with the page
		}
		_, b := get(t, srv.URL+m[1], "Accept-Encoding", "gzip")
		_, p := get(t, srv.URL+m[1], "Accept-Encoding", "identity")
		all += len(b)
		if !strings.HasPrefix(name, "vendor/") {
			own += len(b)
			raw += len(p)
		}
	}
	t.Logf("a page load: %d bytes gzipped (ours %d, %d before gzip)", all, own, raw)
	if own > ownBudget || all > allBudget {
		t.Errorf("a page load sends %d bytes, %d of them ours: over the budget of %d and %d", all, own, allBudget, ownBudget)
	}
}

// TestEmbed: a site's embed origins are its page's frame-ancestors (and
// X-Frame-Options, which has no allow-list, goes); a site without any, an
// unknown one, or a stored list that does not check (nothing of it may
// reach the header) gets the page that no frame may show.
func TestEmbed(t *testing.T) {
	h, err := New()
	if err != nil {
		t.Fatal(err)
	}
	h.EmbedOrigins = func(_ context.Context, site string) []string {
		return map[string][]string{
			"embed.example": {"https://blog.example.com", "http://localhost:8080"},
			"bad.example":   {"https://blog.example.com; script-src *"},
		}[site]
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	h.Routes(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	const base = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors "
	for site, want := range map[string][2]string{
		"embed.example": {base + "http://localhost:8080 https://blog.example.com", ""},
		"bad.example":   {base + "'none'", "DENY"},
		"plain.example": {base + "'none'", "DENY"},
	} {
		resp, _ := get(t, srv.URL+"/dashboard/"+site+"?theme=dark")
		if got := [2]string{resp.Header.Get("Content-Security-Policy"), resp.Header.Get("X-Frame-Options")}; got != want {
			t.Errorf("%s: CSP, X-Frame-Options = %q, want %q", site, got, want)
		}
	}
	// The view survives the redirect to the normal name.
	if resp, _ := get(t, srv.URL+"/dashboard/Embed.Example?theme=dark&range=30d"); resp.Header.Get("Location") != "/dashboard/embed.example?theme=dark&range=30d" {
		t.Errorf("redirect to %q", resp.Header.Get("Location"))
	}
}
