package stats_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount/api/stats"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// The history the tests read: two sites, ten days ending on 2026-04-02
// 10:30 UTC, so it spans Europe/Berlin's change to summer time (2026-03-29,
// a 23-hour day). 300 visitors a day.
var (
	histEnd = time.Date(2026, 4, 2, 10, 30, 0, 0, time.UTC)
	histCfg = storetest.HistoryConfig{Events: 24_000, Days: 10, End: histEnd,
		Sites: []string{"utc.example", "berlin.example"}, Pages: 30, Visitors: 300, Seed: 3, Batch: 5_000}
)

const token = "Bearer good"

type fixture struct {
	t     *testing.T
	store store.Store
	srv   http.Handler
	now   time.Time
	tot   storetest.HistoryTotals
}

// newFixture serves the history; opts adjust the API's configuration.
func newFixture(t *testing.T, opts ...func(*stats.Config)) *fixture {
	t.Helper()
	return newFixtureOf(t, histCfg, map[string]string{"utc.example": "", "berlin.example": "Europe/Berlin"}, opts...)
}

// newFixtureOf serves a history of hc (its End set) whose sites have the
// zones given (site → IANA name, "" for UTC), 90 s after its end.
func newFixtureOf(t *testing.T, hc storetest.HistoryConfig, zones map[string]string, opts ...func(*stats.Config)) *fixture {
	t.Helper()
	st := storetest.Migrated(t)
	tot, err := storetest.History(t.Context(), st, hc)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, store: st, now: hc.End.Add(90 * time.Second), tot: tot}
	cfg := stats.Config{
		Store: st,
		Auth: func(c *gin.Context) (string, bool) {
			if c.GetHeader("Authorization") != token {
				c.JSON(http.StatusUnauthorized, gin.H{"error": "missing or wrong bearer token"})
				return "", false
			}
			return c.Param("site"), true
		},
		Zones:    stats.ZoneNames(func(_ context.Context, site string) (string, error) { return zones[site], nil }, nil),
		NormPage: func(s string) (string, error) { return ingest.NormalisePage(s, false, 0) },
		Lag: func(site string) time.Duration { // per site: berlin.example waits for nothing
			if site == "berlin.example" {
				return 0
			}
			return 1500 * time.Millisecond
		},
		Now:    func() time.Time { return f.now },
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})), // a 503's cause
	}
	for _, o := range opts {
		o(&cfg)
	}
	api, err := stats.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.TestMode)
	e := gin.New()
	api.Routes(e)
	f.srv = e
	return f
}

// get answers path (with the token) and returns the status and body.
func (f *fixture) get(path string, header ...string) (int, string) {
	f.t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	req.Header.Set("Authorization", token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	body, _ := io.ReadAll(w.Body)
	return w.Code, string(body)
}

// getJSON answers path, which must succeed, into v.
func (f *fixture) getJSON(path string, v any) {
	f.t.Helper()
	code, body := f.get(path)
	if code != http.StatusOK {
		f.t.Fatalf("GET %s = %d %s", path, code, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		f.t.Fatalf("GET %s: %v: %s", path, err, body)
	}
}

// rows runs a test-only query over views_raw: the direct count every
// answer is checked against.
func (f *fixture) rows(q string, p store.Params) [][]string {
	f.t.Helper()
	res, err := f.store.Query(f.t.Context(), q, p)
	if err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
	return res.TextRows()
}

func rangeParams(site string, from, to time.Time) store.Params {
	return store.Params{"site": site, "from": from.UTC().Format(time.DateTime), "to": to.UTC().Format(time.DateTime)}
}

// rawCounts are the direct counts of site (one page, or all when page is
// "") in [from, to): valid views, distinct visitors and rejected events.
// Distinct visitors are what the API promises for such a range
// (docs/stats.md, "Unique visitors"): the site's with the sketch it reads
// (dim_rollup's uniqCombined64(12): a sketch of a union is the same whether
// built at once or merged from buckets, so the merged count must equal
// it), a page's exactly below 4096 views and with that sketch above; and
// never more than the views.
func (f *fixture) rawCounts(site, page string, from, to time.Time) (views, uniques, filtered uint64) {
	f.t.Helper()
	p := rangeParams(site, from, to)
	p["page"] = page
	const where = " FROM views_raw WHERE site = {site:String} AND time >= {from:DateTime64(3)} AND time < {to:DateTime64(3)} AND ({page:String} = '' OR page = {page:String})"
	r := f.rows("SELECT countIf(verdict = 'valid') AS v, least(v, if({page:String} != '' AND v < 4096, uniqExactIf(visitor, verdict = 'valid'), uniqCombined64If(12)(visitor, verdict = 'valid'))), countIf(verdict != 'valid')"+where, p)
	n := func(s string) uint64 { v, _ := strconv.ParseUint(s, 10, 64); return v }
	return n(r[0][0]), n(r[0][1]), n(r[0][2])
}

func berlin(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestStats(t *testing.T) {
	f := newFixture(t)
	f.t = t
	for _, tc := range []struct {
		name string
		run  func(*fixture)
	}{
		{"summary", testSummary},
		{"timeseries", testTimeseries},
		{"breakdown", testBreakdown},
		{"realtime", testRealtime},
		{"filtered", testFiltered},
		{"csv", testCSV},
		{"bad params", testBadParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.t = t
			tc.run(f)
		})
	}
}

func testBadParams(f *fixture) {
	t := f.t
	check := func(path string, want int, wantErr string) {
		t.Helper()
		code, body := f.get(path)
		if code != want || !strings.Contains(body, wantErr) {
			t.Errorf("GET %s = %d %s, want %d with %q", path, code, body, want, wantErr)
		}
	}
	base := "/v1/sites/utc.example/stats/"
	check(base+"summary?from=yesterday", 400, `"error":"from: want YYYY-MM-DD or an RFC 3339 time"`)
	check(base+"summary?to=2026-13-01", 400, `"error":"to: want YYYY-MM-DD`)
	check(base+"summary?from=2026-03-10&to=2026-03-01", 400, `"error":"from: not before to"`)
	check(base+"summary?from=2024-01-01&to=2026-03-01", 400, `"error":"to: the range is longer than 400 days`)
	check(base+"summary?from=1969-12-31", 400, `"error":"from: before 1970-01-01"`)
	check(base+"summary?to=2200-01-01", 400, `"error":"to: after 2100-01-01"`)
	check(base+"summary?format=xml", 400, `"error":"format: want csv or json"`)
	check(base+"summary?page=%ff", 400, `"error":"page: `)
	check(base+"timeseries?interval=week", 400, `"error":"interval: want one of minute, hour, day"`)
	check(base+"timeseries?interval=minute&from=2026-03-01&to=2026-03-02", 400, `"error":"to: the range is longer than 24 hours`)
	check(base+"timeseries?interval=hour&from=2026-03-01&to=2026-03-08", 400, `"error":"to: the range is longer than 7 days`)
	check(base+"breakdown", 400, `"error":"by: want one of page, entry_page, exit_page, source, channel, referrer`)
	check(base+"breakdown?by=city", 400, `"error":"by: want one of`)
	check(base+"breakdown?by=page&limit=0", 400, `"error":"limit: want a whole number from 1 to 1000"`)
	check(base+"breakdown?by=page&limit=1001", 400, `"error":"limit: want a whole number from 1 to 1000"`)
	check(base+"breakdown?by=page&offset=-1", 400, `"error":"offset: want a whole number`)
	check(base+"filtered?interval=minute", 400, `"error":"interval: want one of hour, day"`)
	check(base+"filtered?limit=101", 400, `"error":"limit: want a whole number from 1 to 100"`)
	req := httptest.NewRequest(http.MethodGet, base+"summary", nil)
	req.Header.Set("Authorization", "Bearer wrong")
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	if w.Code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d %s", w.Code, w.Body)
	}
}
