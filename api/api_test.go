package api

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/internal/httpserve"
	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// clock is the test's time source: the snapshot's as_of comes from it.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

type fixture struct {
	metrics *viewcount.Metrics // the engine times every request into it
	store   store.Store
	sites   *stream.Sites
	snap    *Snapshot
	reads   *countingQuerier // the store as the snapshot reads it
	clock   *clock
	srv     http.Handler
	seq     uint64
}

const testAdmin = "admin-secret"

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{store: storetest.Migrated(t), clock: &clock{time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}}
	var err error
	if f.sites, err = stream.OpenSites(ctx, streamtest.Open(t, 1), nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.sites.Close)
	f.reads = &countingQuerier{Querier: f.store}
	f.snap = NewSnapshot(f.reads, 10*time.Second, 0, f.clock.now, discard())
	// The fixture's feeds run when a test runs them (often from its
	// progress function, which an answer calls while it waits), never on
	// their own: an answer waiting for its own view must not give up on a
	// wall-clock bound a loaded machine can reach (a feed at nice 10 under
	// CI took longer than ownWait's 2 s). A test of the bound sets its own.
	f.snap.ownWait = time.Minute
	norm := func(s string) (string, error) { return ingest.NormalisePage(s, false, 0) }
	srv, err := New(Config{PublicLag: 10 * time.Second, AdminToken: testAdmin}, f.snap, f.store, f.sites, norm, discard(), f.clock.now)
	if err != nil {
		t.Fatal(err)
	}
	f.metrics = viewcount.NewMetricsWith(latency.New())
	e, err := httpserve.NewEngine(nil, f.metrics)
	if err != nil {
		t.Fatal(err)
	}
	srv.Routes(e)
	f.srv = e
	return f
}

// views inserts n valid views of site+page by distinct visitors.
func (f *fixture) views(t testing.TB, site, page string, n int) {
	t.Helper()
	rows := make([]viewcount.Verdict, n)
	f.seq++
	for i := range rows {
		rows[i] = viewcount.Verdict{
			Event:  viewcount.Event{Time: f.clock.t, Site: site, Page: page, UA: "Mozilla/5.0", Visitor: f.seq<<32 | uint64(i), Source: viewcount.SourcePixel},
			Reason: viewcount.Valid, Seq: f.seq, Index: uint32(i),
		}
	}
	if err := storetest.InsertFed(context.Background(), f.store, "", rows); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) get(t *testing.T, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	return w
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s:\n got %s\nwant %s", name, got, want)
	}
}

func TestCountIsLaggedSnapshot(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.sites.Add(context.Background(), "example.com"); err != nil {
		t.Fatal(err)
	}
	tricky := `/it's\back "quoted"`
	f.views(t, "example.com", "/post", 42)
	f.views(t, "example.com", tricky, 7)

	w := f.get(t, "/v1/sites/example.com/count?page=/post/")
	if w.Code != 200 || w.Header().Get("Cache-Control") != "public, max-age=10" {
		t.Fatalf("count: %d %q", w.Code, w.Header().Get("Cache-Control"))
	}
	golden(t, "count.json", w.Body.Bytes())
	golden(t, "count_site.json", f.get(t, "/v1/sites/example.com/count").Body.Bytes())
	golden(t, "count_unseen.json", f.get(t, "/v1/sites/example.com/count?page=/never").Body.Bytes())

	// New views are not seen until the next refresh: reads are cache hits
	// (and, being second reads, make the refresh re-read those counts).
	f.views(t, "example.com", "/post", 8)
	var c countResponse
	_ = json.Unmarshal(f.get(t, "/v1/sites/example.com/count?page=/post").Body.Bytes(), &c)
	if c.Views != 42 {
		t.Fatalf("before refresh: %d views, want the cached 42", c.Views)
	}
	_ = json.Unmarshal(f.get(t, "/v1/sites/example.com/count").Body.Bytes(), &c)
	if c.Views != 49 {
		t.Fatalf("site total before refresh: %d views, want the cached 49", c.Views)
	}
	f.clock.t = f.clock.t.Add(10 * time.Second)
	f.snap.refresh(context.Background())
	_ = json.Unmarshal(f.get(t, "/v1/sites/example.com/count?page=/post").Body.Bytes(), &c)
	if c.Views != 50 || c.Uniques != 50 || c.AsOf != "2026-11-29T12:00:10Z" {
		t.Fatalf("after refresh: %+v, want 50 views as of 12:00:10", c)
	}
	_ = json.Unmarshal(f.get(t, "/v1/sites/example.com/count?page="+url.QueryEscape(tricky)).Body.Bytes(), &c)
	if c.Views != 7 || c.Page != tricky {
		t.Fatalf("tricky page after refresh: %+v", c)
	}
	_ = json.Unmarshal(f.get(t, "/v1/sites/example.com/count").Body.Bytes(), &c)
	if c.Views != 57 {
		t.Fatalf("site total after refresh: %+v, want 57", c)
	}

	// An unregistered site reads like a registered one without views (issue
	// 9: a 404 told which sites exist, while /invalid hides it), at the same
	// cost: a store query on its first read, an entry in the snapshot
	// (TestPublicReadsSameWorkForUnknownSites).
	for i, q := range []string{"?page=/", "?page=/never2", ""} {
		var w, known *httptest.ResponseRecorder
		uq := f.queries(func() { w = f.get(t, "/v1/sites/nope.example/count"+q) })
		kq := f.queries(func() { known = f.get(t, "/v1/sites/example.com/count?page=/unseen"+strconv.Itoa(i)) })
		if w.Code != 200 || w.Header().Get("Cache-Control") != known.Header().Get("Cache-Control") ||
			w.Header().Get("Content-Type") != known.Header().Get("Content-Type") {
			t.Errorf("unknown site %s: %d %v, want 200 like %v", q, w.Code, w.Header(), known.Header())
		}
		if uq != 1 || kq != 1 {
			t.Errorf("first read %s: %d store queries for an unknown site, %d for a registered site's unseen page; want 1 and 1", q, uq, kq)
		}
		want := `{"site":"nope.example","views":0,"uniques":0,"as_of":"2026-11-29T12:00:10Z","pending":0}`
		if q != "" {
			want = `{"site":"nope.example","page":"` + strings.TrimPrefix(q, "?page=") + `","views":0,"uniques":0,"as_of":"2026-11-29T12:00:10Z","pending":0}`
		}
		if w.Body.String() != want {
			t.Errorf("unknown site %s: %s, want %s", q, w.Body, want)
		}
		if n := f.queries(func() { f.get(t, "/v1/sites/nope.example/count"+q) }); n != 0 {
			t.Errorf("unknown site %s read again: %d store queries, want 0 (the snapshot)", q, n)
		}
	}
	if w := f.get(t, "/v1/sites/nope.example/count?page=%00"); w.Code != 400 {
		t.Errorf("unknown site, bad page: %d", w.Code)
	}
	if w := f.get(t, "/v1/sites/bad..site/count?page=/"); w.Code != 400 {
		t.Errorf("bad site: %d", w.Code)
	}
	if w := f.get(t, "/v1/sites/example.com/count?page=%00"); w.Code != 400 {
		t.Errorf("binary page: %d %s", w.Code, w.Body)
	}
}

func TestSnapshotBounded(t *testing.T) {
	f := newFixture(t)
	f.snap.max = 10
	for i := 0; i < 50; i++ {
		if _, err := f.snap.Get(context.Background(), "example.com", "/p"+strings.Repeat("x", i)); err != nil {
			t.Fatal(err)
		}
		if n := len(f.snap.entries); n > 10 {
			t.Fatalf("%d entries tracked, cap 10", n)
		}
	}
	// Pages not read for the idle period are dropped at the next refresh.
	f.clock.t = f.clock.t.Add(f.snap.idle + time.Second)
	f.snap.refresh(context.Background())
	if n := len(f.snap.entries); n != 0 {
		t.Fatalf("%d idle entries kept", n)
	}
}

func TestAdminSites(t *testing.T) {
	f := newFixture(t)
	post := func(auth, body string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/v1/admin/sites", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		f.srv.ServeHTTP(w, r)
		return w
	}
	check := func(w *httptest.ResponseRecorder, code int, inBody string) {
		t.Helper()
		if w.Code != code || !strings.Contains(w.Body.String(), inBody) {
			t.Errorf("got %d %s, want %d with %q", w.Code, w.Body, code, inBody)
		}
	}
	check(post("", `{"domain":"a.example"}`), 401, "token")
	check(post("Bearer wrong", `{"domain":"a.example"}`), 401, "token")
	check(post("Bearer "+testAdmin, `{"domain":`), 400, "domain")
	check(post("Bearer "+testAdmin, `{"domain":"not a domain"}`), 400, "domain")
	// Only public-looking host names (viewcount.CheckRegistrable).
	check(post("Bearer "+testAdmin, `{"domain":"localhost"}`), 400, "domain: a single label")
	check(post("Bearer "+testAdmin, `{"domain":"127.0.0.1"}`), 400, "domain: an IP address")
	check(post("Bearer "+testAdmin, `{"domain":"[::1]"}`), 400, "domain: an IP address")
	check(post("Bearer "+testAdmin, `{"domain":"_.test"}`), 400, "domain: underscore")
	check(post("Bearer "+testAdmin, `{"domain":"app.localhost"}`), 400, "domain: localhost")
	check(post("Bearer "+testAdmin, `{"domain":"A.Example"}`), 201, `"site":"a.example"`)
	check(post("Bearer "+testAdmin, `{"domain":"a.example"}`), 409, "already")
	if !f.sites.Known("a.example") {
		t.Error("site not in the registry")
	}
}

// TestCountQueryParam pins how the page parameter is read: as
// url.ParseQuery(raw).Get("page") reads it (what c.GetQuery did), so a pair
// with a bad escape or a ';' is skipped rather than rejected.
func TestCountQueryParam(t *testing.T) {
	fx := newFixture(t)
	if _, _, err := fx.sites.Add(context.Background(), "example.com"); err != nil {
		t.Fatal(err)
	}
	fx.views(t, "example.com", "/post", 3)
	fx.views(t, "example.com", "/a b", 2)
	f := func(query string, code int, page string, views uint64) {
		t.Helper()
		w := fx.get(t, "/v1/sites/example.com/count"+query)
		if w.Code != code {
			t.Errorf("%s: %d %s, want %d", query, w.Code, w.Body, code)
			return
		}
		if code != 200 {
			return
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", query, ct)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "public, max-age=10" {
			t.Errorf("%s: Cache-Control %q", query, cc)
		}
		var c countResponse
		if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil || c.Page != page || c.Views != views {
			t.Errorf("%s: %s (%v), want page %q with %d views", query, w.Body, err, page, views)
		}
	}
	f("", 200, "", 5)
	f("?page=/post", 200, "/post", 3)
	f("?page=%2Fpost", 200, "/post", 3)
	f("?page=/a+b", 200, "/a b", 2)
	f("?page=/a%20b", 200, "/a b", 2)
	f("?pag%65=/post", 200, "/post", 3)
	f("?page=/post&page=/a+b", 200, "/post", 3)
	f("?x=1&page=/post", 200, "/post", 3)
	f("?page=%zz", 200, "", 5)
	f("?page=%zz&page=/post", 200, "/post", 3)
	f("?page=/post;x", 200, "", 5)
	f("?pa%zzge=/a+b&page=/post", 200, "/post", 3)
	f("?page", 400, "", 0)
	f("?page=", 400, "", 0)
	f("?page=%00", 400, "", 0)
	f("?page=/"+strings.Repeat("x", 2048), 400, "", 0)
}

// TestCountDuringRefresh reads counts while refreshes replace them: every
// answer is one reading's whole body, never a mix (run with -race).
func TestCountDuringRefresh(t *testing.T) {
	fx := newFixture(t)
	if _, _, err := fx.sites.Add(context.Background(), "example.com"); err != nil {
		t.Fatal(err)
	}
	fx.views(t, "example.com", "/post", 3)
	// Read twice: the second read is what makes the first refresh re-read.
	for _, q := range []string{"?page=/post", "", "?page=/post", ""} {
		if w := fx.get(t, "/v1/sites/example.com/count"+q); w.Code != 200 {
			t.Fatalf("warm-up %q: %d %s", q, w.Code, w.Body)
		}
	}
	fx.views(t, "example.com", "/post", 4)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The clock stays put: the test's clock is not safe to move while
		// requests read it, and refresh re-reads the counts regardless.
		for range 3 {
			fx.snap.refresh(context.Background())
		}
	}()
	seen := map[string]bool{}
	for reading := true; reading; {
		select {
		case <-done:
			reading = false
		default:
		}
		for _, q := range []string{"?page=/post", ""} {
			w := fx.get(t, "/v1/sites/example.com/count"+q)
			var c countResponse
			if err := json.Unmarshal(w.Body.Bytes(), &c); w.Code != 200 || err != nil {
				t.Fatalf("%q: %d %s (%v)", q, w.Code, w.Body, err)
			}
			seen[w.Body.String()] = true
		}
	}
	want := map[string]bool{
		`{"site":"example.com","page":"/post","views":3,"uniques":3,"as_of":"2026-11-29T12:00:00Z","pending":0}`: true,
		`{"site":"example.com","page":"/post","views":7,"uniques":7,"as_of":"2026-11-29T12:00:00Z","pending":0}`: true,
		`{"site":"example.com","views":3,"uniques":3,"as_of":"2026-11-29T12:00:00Z","pending":0}`:                true,
		`{"site":"example.com","views":7,"uniques":7,"as_of":"2026-11-29T12:00:00Z","pending":0}`:                true,
	}
	for body := range seen {
		if !want[body] {
			t.Errorf("unexpected answer %s", body)
		}
	}
	for _, q := range []string{"?page=/post", ""} {
		var c countResponse
		_ = json.Unmarshal(fx.get(t, "/v1/sites/example.com/count"+q).Body.Bytes(), &c)
		if c.Views != 7 {
			t.Errorf("%q after the refreshes: %+v, want 7 views", q, c)
		}
	}
}
