package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func (f *fixture) post(t *testing.T, path, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	f.srv.ServeHTTP(w, r)
	return w
}

// queries returns how many store queries do made.
func (f *fixture) queries(do func()) int64 {
	before := f.reads.n.Load()
	do()
	return f.reads.n.Load() - before
}

func TestCountsBatch(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.sites.Add(context.Background(), "example.com"); err != nil {
		t.Fatal(err)
	}
	tricky := `/it's\back "quoted"`
	f.views(t, "example.com", "/a", 5)
	f.views(t, "example.com", "/b", 3)
	f.views(t, "example.com", tricky, 2)

	// Three distinct pages new to the snapshot (one asked twice, one as
	// /b/): one store query for all of them, answered in the order asked.
	const path = "/v1/sites/example.com/counts?page=/a&page=/b/&page=/never&page=/a"
	var w *httptest.ResponseRecorder
	if n := f.queries(func() { w = f.get(t, path) }); n != 1 {
		t.Errorf("first batch: %d store queries, want 1", n)
	}
	if w.Code != 200 || w.Header().Get("Cache-Control") != "public, max-age=10" ||
		w.Header().Get("Content-Type") != "application/json; charset=utf-8" || w.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("batch: %d %v", w.Code, w.Header())
	}
	golden(t, "counts.json", w.Body.Bytes())
	if n := f.queries(func() { w = f.get(t, path) }); n != 0 || !strings.Contains(w.Body.String(), `"views":5`) {
		t.Errorf("second batch: %d store queries, want 0 (snapshot hits): %s", n, w.Body)
	}

	// The POST form answers the same, from JSON or text/plain (no preflight).
	body := `{"pages":["/a","/b/","/never","/a"]}`
	for _, ct := range []string{"application/json", "text/plain;charset=UTF-8"} {
		if p := f.post(t, "/v1/sites/example.com/counts", ct, body); p.Code != 200 || p.Body.String() != w.Body.String() {
			t.Errorf("POST %s: %d %s, want the GET's %s", ct, p.Code, p.Body, w.Body)
		}
	}
	var got countsResponse
	p := f.post(t, "/v1/sites/example.com/counts", "application/json", `{"pages":[`+strconv.Quote(tricky)+`]}`)
	if err := json.Unmarshal(p.Body.Bytes(), &got); err != nil || len(got.Counts) != 1 ||
		got.Counts[0] != (pageCount{Page: tricky, Views: 2, Uniques: 2}) {
		t.Errorf("tricky page: %s (%v)", p.Body, err)
	}

	// as_of is the oldest reading's: /a read at 12:00:00, /c first read at
	// 12:00:05 (within the stale bound, so /a is not fetched again).
	f.views(t, "example.com", "/c", 1)
	f.clock.t = f.clock.t.Add(5 * time.Second)
	if n := f.queries(func() { w = f.get(t, "/v1/sites/example.com/counts?page=/c&page=/a") }); n != 1 {
		t.Errorf("mixed batch: %d store queries, want 1", n)
	}
	want := `{"site":"example.com","as_of":"2026-11-29T12:00:00Z","counts":[{"page":"/c","views":1,"uniques":1,"pending":0},{"page":"/a","views":5,"uniques":5,"pending":0}]}`
	if w.Body.String() != want {
		t.Errorf("mixed batch:\n got %s\nwant %s", w.Body, want)
	}

	// Read again, both are re-read by the next refresh together: one query,
	// one as_of.
	if n := f.queries(func() { f.get(t, "/v1/sites/example.com/counts?page=/c&page=/a") }); n != 0 {
		t.Errorf("mixed batch again: %d store queries, want 0", n)
	}
	f.views(t, "example.com", "/a", 1)
	f.clock.t = f.clock.t.Add(10 * time.Second)
	if n := f.queries(func() { f.snap.refresh(context.Background()) }); n != 1 {
		t.Errorf("refresh: %d store queries, want 1", n)
	}
	want = `{"site":"example.com","as_of":"2026-11-29T12:00:15Z","counts":[{"page":"/c","views":1,"uniques":1,"pending":0},{"page":"/a","views":6,"uniques":6,"pending":0}]}`
	if w = f.get(t, "/v1/sites/example.com/counts?page=/c&page=/a"); w.Body.String() != want {
		t.Errorf("after the refresh:\n got %s\nwant %s", w.Body, want)
	}

	// With the store out, stale readings are still served (their as_of says
	// how old); a page never read cannot be.
	f.clock.t = f.clock.t.Add(time.Minute)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	rs, err := f.snap.getMany(cancelled, "example.com", []string{"/a", "/c"})
	if err != nil || rs[0].Views != 6 || rs[1].Views != 1 {
		t.Errorf("stale batch with the store out: %v", err)
	}
	if _, err := f.snap.getMany(cancelled, "example.com", []string{"/a", "/new"}); err == nil {
		t.Error("batch with a never-read page and the store out: no error")
	}
}

func TestCountsBadInput(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.sites.Add(context.Background(), "example.com"); err != nil {
		t.Fatal(err)
	}
	check := func(w *httptest.ResponseRecorder, code int, msg string) {
		t.Helper()
		var e struct{ Error string }
		if err := json.Unmarshal(w.Body.Bytes(), &e); w.Code != code || err != nil || e.Error != msg {
			t.Errorf("got %d %s, want %d %q", w.Code, w.Body, code, msg)
		}
		if w.Header().Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("error answer %q without CORS: a page could not read why", msg)
		}
	}
	const base = "/v1/sites/example.com/counts"
	many := func(n int) []string {
		pages := make([]string, n)
		for i := range pages {
			pages[i] = "/p" + strconv.Itoa(i)
		}
		return pages
	}
	query := func(pages []string) string { return base + "?page=" + strings.Join(pages, "&page=") }
	check(f.get(t, base), 400, "page: at least one page is required")
	check(f.get(t, query(many(101))), 400, "page: at most 100 pages, got 101")
	check(f.get(t, base+"?"+strings.Repeat("x=1&", 400)+"page=/a"), 400, "page: at most 100 pages")
	check(f.get(t, base+"?page=/a&page=/b&page=%00"), 400, "page[2]: bad input: control character")
	check(f.get(t, base+"?page=/a&page="), 400, "page[1]: bad input: empty page")
	check(f.get(t, base+"?page=/"+strings.Repeat("x", 2048)), 400, "page[0]: longer than 2048 bytes")
	check(f.get(t, "/v1/sites/bad..site/counts?page=/a"), 400, "site: not a domain name")
	check(f.post(t, base, "application/json", `["/a"]`), 400, `body: want {"pages":["/a","/b"]}`)
	check(f.post(t, base, "application/json", `{"pages":"/a"}`), 400, `body: want {"pages":["/a","/b"]}`)
	check(f.post(t, base, "application/json", `{"pages":[]}`), 400, "pages: at least one page is required")
	check(f.post(t, base, "application/json", `{}`), 400, "pages: at least one page is required")
	b, _ := json.Marshal(map[string][]string{"pages": many(101)})
	check(f.post(t, base, "application/json", string(b)), 400, "pages: at most 100 pages, got 101")
	check(f.post(t, base, "application/json", `{"pages":["/a","\u0000"]}`), 400, "pages[1]: bad input: control character")
	check(f.post(t, base, "application/json", "{\"pages\":[\"/\xff\"]}"), 400, "pages: invalid UTF-8")
	check(f.post(t, base, "application/x-www-form-urlencoded", `page=/a`), 415, "content type must be application/json or text/plain")
	check(f.post(t, base, "application/json", `{"pages":["/`+strings.Repeat("x", 256<<10)+`"]}`), 413, "body: larger than 256 KiB")
	if n := len(f.snap.entries); n != 0 {
		t.Errorf("bad requests put %d pages in the snapshot", n)
	}

	// 100 pages is the limit, not beyond it.
	var got countsResponse
	w := f.get(t, query(many(100)))
	if err := json.Unmarshal(w.Body.Bytes(), &got); w.Code != 200 || err != nil || len(got.Counts) != 100 || got.Counts[99].Page != "/p99" {
		t.Errorf("100 pages: %d %.200s", w.Code, w.Body)
	}
}

// TestCountsUnknownSite: an unregistered site reads as zeros, as /count
// does, at the cost of a registered site's unseen pages: one store query
// for the batch, then the snapshot.
func TestCountsUnknownSite(t *testing.T) {
	f := newFixture(t)
	var w *httptest.ResponseRecorder
	if n := f.queries(func() { w = f.get(t, "/v1/sites/nope.example/counts?page=/a&page=/b/") }); n != 1 {
		t.Errorf("%d store queries for an unknown site's batch, want 1", n)
	}
	want := `{"site":"nope.example","as_of":"2026-11-29T12:00:00Z","counts":[{"page":"/a","views":0,"uniques":0,"pending":0},{"page":"/b","views":0,"uniques":0,"pending":0}]}`
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("unknown site: %d %s, want %s", w.Code, w.Body, want)
	}
	if n := f.queries(func() { w = f.get(t, "/v1/sites/nope.example/counts?page=/a&page=/b/") }); n != 0 || w.Body.String() != want {
		t.Errorf("read again: %d store queries, %s", n, w.Body)
	}
}

// TestCORS: the public reads answer any origin, without credentials; the
// endpoints that take a token answer none.
func TestCORS(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.sites.Add(context.Background(), "example.com"); err != nil {
		t.Fatal(err)
	}
	do := func(method, path string, hdr map[string]string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, path, nil)
		r.Header.Set("Origin", "https://blog.example.org")
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		f.srv.ServeHTTP(w, r)
		return w
	}
	for _, path := range []string{"/v1/sites/example.com/count?page=/a", "/v1/sites/example.com/counts?page=/a",
		"/badge/example.com.svg?page=/a", "/v1/sites/nope.example/count", "/v1/sites/example.com/count?page=%00"} {
		w := do("GET", path, nil)
		if w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Access-Control-Allow-Credentials") != "" ||
			w.Header().Get("Vary") != "" {
			t.Errorf("GET %s: %d %v, want Access-Control-Allow-Origin: * alone", path, w.Code, w.Header())
		}
	}
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
	w := do("OPTIONS", "/v1/sites/example.com/counts", preflight)
	want := http.Header{"Access-Control-Allow-Origin": {"*"}, "Access-Control-Allow-Methods": {"GET, POST"},
		"Access-Control-Allow-Headers": {"Content-Type"}, "Access-Control-Max-Age": {"86400"},
		"X-Content-Type-Options": {"nosniff"}} // every answer's (noSniff)
	if w.Code != http.StatusNoContent || !sameHeaders(w.Header(), want) {
		t.Errorf("preflight of /counts: %d %v, want 204 %v", w.Code, w.Header(), want)
	}
	for _, path := range []string{"/v1/sites/example.com/count", "/badge/example.com.svg"} {
		w := do("OPTIONS", path, map[string]string{"Access-Control-Request-Method": "GET"})
		if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Methods") != "GET" {
			t.Errorf("preflight of %s: %d %v", path, w.Code, w.Header())
		}
	}
	for _, r := range []struct{ method, path string }{{"GET", "/v1/sites/example.com/invalid"},
		{"POST", "/v1/admin/sites"}, {"OPTIONS", "/v1/admin/sites"}, {"OPTIONS", "/v1/sites/example.com/invalid"}} {
		w := do(r.method, r.path, map[string]string{"Authorization": "Bearer " + testAdmin})
		if v := w.Header().Get("Access-Control-Allow-Origin"); v != "" {
			t.Errorf("%s %s: Access-Control-Allow-Origin %q on a token endpoint", r.method, r.path, v)
		}
	}
}

// sameHeaders reports whether got holds exactly the headers of want, ignoring
// the ones net/http adds (Date, Content-Length).
func sameHeaders(got, want http.Header) bool {
	n := 0
	for k, v := range got {
		if k == "Date" || k == "Content-Length" {
			continue
		}
		if n++; strings.Join(v, ",") != strings.Join(want[k], ",") {
			return false
		}
	}
	return n == len(want)
}

// FuzzCountsBody: whatever a POST carries, the answer is 200 or a 4xx
// naming the problem, never a 5xx or a panic. An unregistered site keeps
// the store out of it.
func FuzzCountsBody(f *testing.F) {
	fx := newFixture(f)
	for _, s := range []string{`{"pages":["/a"]}`, `["/a"]`, `{"pages":["/a","\ud800"]}`, `{"pages":[1]}`, `{"pages":null}`, "{\"pages\":[\"\xff\"]}",
		`{"pages":["/a"],"own":[{"page":"/a","position":"0:1"}]}`, `{"pages":["/a"],"own":[{"page":"/a","position":"0:x"}]}`, `{"pages":["/a"],"own":[null]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/sites/nope.example/counts", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		fx.srv.ServeHTTP(w, r)
		if w.Code != 200 && w.Code != 400 && w.Code != 413 {
			t.Fatalf("%q: %d %s", body, w.Code, w.Body)
		}
	})
}
