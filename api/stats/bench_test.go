package stats_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/api/stats"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkStats answers every stats call over the last 30 days of a
// generated history of one site (1k pages, Europe/Berlin, so ranges have
// hour edges; every valid view with its visit's figures and an engagement
// report for some, HistoryConfig.Visits) and reports each call's p50 and p99 latency through the
// HTTP handler, store included.
//
// By default the history is 200k events in a test database, so `make
// bench` stays quick. VIEWCOUNT_STATS_EVENTS=10000000 measures the issue's
// size; that history is kept under $XDG_CACHE_HOME/viewcount/stats-bench
// (keyed by the generator's version and the size) so reruns skip the
// generation. chDB opens one data directory per process, so run it alone:
//
//	VIEWCOUNT_STATS_EVENTS=10000000 go test -run '^$' -bench BenchmarkStats -benchtime 200x -timeout 60m ./api/stats/
func BenchmarkStats(b *testing.B) {
	events := 200_000
	if v := os.Getenv("VIEWCOUNT_STATS_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("VIEWCOUNT_STATS_EVENTS=%q: want a positive number", v)
		}
		events = n
	}
	end := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	st := benchStore(b, events, end)
	now := end.Add(time.Minute)
	// Every call reads the store (no answer cache), what a call costs the
	// first time it is asked; the cached/ calls measure the answer cache's
	// hits, what a repeated call costs within the max-age (or for ever
	// once its range has settled).
	server := func(cacheBytes int64) http.Handler {
		api, err := stats.New(stats.Config{
			Store:       st,
			Auth:        func(c *gin.Context) (string, bool) { return c.Param("site"), true },
			Zones:       stats.ZoneNames(func(context.Context, string) (string, error) { return "Europe/Berlin", nil }, nil),
			NormPage:    func(s string) (string, error) { return ingest.NormalisePage(s, false, 0) },
			SourceKinds: testKinds,
			Now:         func() time.Time { return now },
			CacheBytes:  cacheBytes,
		})
		if err != nil {
			b.Fatal(err)
		}
		e := gin.New()
		api.Routes(e)
		return e
	}
	gin.SetMode(gin.ReleaseMode)
	e, cached := server(0), server(32<<20)
	const base = "/v1/sites/history.example/stats/"
	week := "&from=" + url(end.Add(-7*24*time.Hour)) + "&to=" + url(end)
	day := "&from=" + url(end.Add(-24*time.Hour)) + "&to=" + url(end)
	type call struct {
		name, path string
		cached     bool
	}
	calls := []call{
		{name: "summary", path: "summary?"},
		{name: "summary/page", path: "summary?page=/posts/3"},
		{name: "timeseries/day", path: "timeseries?interval=day"},
		{name: "timeseries/day/page", path: "timeseries?interval=day&page=/posts/3"},
		{name: "timeseries/hour/7d", path: "timeseries?interval=hour" + week},
		{name: "timeseries/minute/24h", path: "timeseries?interval=minute" + day},
		// Engagement metrics, from engagement_rollup.
		{name: "timeseries/day/visits", path: "timeseries?interval=day&metric=visits"},
		{name: "timeseries/hour/7d/time_on_page", path: "timeseries?interval=hour&metric=time_on_page" + week},
		{name: "timeseries/day/page/scroll_depth", path: "timeseries?interval=day&metric=scroll_depth&page=/posts/3"},
		{name: "realtime", path: "realtime?"},
		{name: "filtered/day", path: "filtered?interval=day"},
		{name: "filtered/hour/7d", path: "filtered?interval=hour" + week},
		{name: "breakdown/page/one", path: "breakdown?by=page&page=/posts/3"},
		{name: "breakdown/page/100", path: "breakdown?by=page&limit=100"},
		{name: "csv/breakdown/page", path: "breakdown?by=page&format=csv"},
		// One page's breakdowns (page_views, migration 011): a popular page and one of
		// the long tail.
		{name: "breakdown/source/page", path: "breakdown?by=source&page=/posts/3"},
		{name: "breakdown/country/page", path: "breakdown?by=country&page=/posts/3"},
		{name: "breakdown/source/page/tail", path: "breakdown?by=source&page=/posts/900"},
	}
	// Filters (filter.go): on one dimension from its rollup rows; a
	// breakdown by another dimension, and filters on two, from page_views.
	calls = append(calls,
		call{name: "filter/summary/country", path: "summary?filter=country==DE"},
		call{name: "filter/summary/source_not", path: "summary?filter=source!=Google"},
		call{name: "filter/summary/page_contains", path: "summary?filter=page~/posts/1"},
		call{name: "filter/timeseries/day/country", path: "timeseries?interval=day&filter=country==DE"},
		call{name: "filter/timeseries/hour/7d/browser", path: "timeseries?interval=hour&filter=browser==Firefox" + week},
		call{name: "filter/timeseries/day/visits/country", path: "timeseries?interval=day&metric=visits&filter=country==DE"},
		call{name: "filter/breakdown/country/country_not", path: "breakdown?by=country&filter=country!=US"},
		call{name: "filter/breakdown/page/100/page_contains", path: "breakdown?by=page&limit=100&filter=page~/posts/1"},
		call{name: "filter/breakdown/page/country", path: "breakdown?by=page&filter=country==DE"},
		call{name: "filter/breakdown/source/country", path: "breakdown?by=source&filter=country==DE"},
		call{name: "filter/breakdown/browser/os", path: "breakdown?by=browser&filter=os==Windows"},
		call{name: "filter2/summary", path: "summary?filter=country==DE&filter=browser==Chrome"},
		call{name: "filter2/timeseries/day", path: "timeseries?interval=day&filter=country==DE&filter=browser==Chrome"},
		call{name: "filter2/breakdown/page", path: "breakdown?by=page&filter=country==DE&filter=browser==Chrome"},
	)
	for _, by := range []string{"page", "entry_page", "exit_page", "source", "channel", "referrer", "utm_source", "utm_medium", "utm_campaign", "browser", "os", "device", "country", "screen"} {
		calls = append(calls, call{name: "breakdown/" + by, path: "breakdown?by=" + by})
	}
	for _, c := range []string{"summary", "timeseries/day", "breakdown/page/100", "filtered/day"} {
		i := slices.IndexFunc(calls, func(x call) bool { return x.name == c })
		calls = append(calls, call{"cached/" + c, calls[i].path, true})
	}
	for _, c := range calls {
		srv := e
		if c.cached {
			srv = cached
		}
		b.Run(c.name, func(b *testing.B) {
			var lat []time.Duration
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, base+c.path, nil)
				w := httptest.NewRecorder()
				t0 := time.Now()
				srv.ServeHTTP(w, req)
				lat = append(lat, time.Since(t0))
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d %s", c.path, w.Code, w.Body)
				}
			}
			slices.Sort(lat)
			q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
		})
	}
}

func url(t time.Time) string { return t.Format("2006-01-02T15:04:05Z") }

// benchStore returns a migrated store holding the history: a test database
// for the default size, else a store cached under the cache directory.
func benchStore(b *testing.B, events int, end time.Time) store.Store {
	cfg := storetest.HistoryConfig{Events: events, End: end, Seed: 1, Visits: true, Progress: os.Stderr}
	if os.Getenv("VIEWCOUNT_STATS_EVENTS") == "" {
		st := storetest.Open(b)
		if err := migrations.Apply(b.Context(), st, nil); err != nil {
			b.Fatal(err)
		}
		cfg.Progress = nil
		if _, err := storetest.History(b.Context(), st, cfg); err != nil {
			b.Fatal(err)
		}
		return st
	}
	// Keyed by the generator's version, the size and the schema: a
	// changed migration needs a store built with it.
	h := sha256.New()
	ms, err := migrations.All()
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range ms {
		for _, st := range m.Statements {
			for line := range strings.Lines(st) {
				if !strings.HasPrefix(strings.TrimSpace(line), "--") { // comments change no row
					h.Write([]byte(line))
				}
			}
		}
	}
	dir := viewcount.CacheDir("stats-bench", fmt.Sprintf("v%d-%d-visits-%x", storetest.HistoryVersion, events, h.Sum(nil)[:4]))
	st, err := store.Open(b.Context(), store.Config{DataDir: dir, Database: "bench"}, nil)
	if err != nil {
		b.Fatalf("open the cached store (run this benchmark alone: chDB opens one data dir per process): %v", err)
	}
	b.Cleanup(func() { _ = st.Close() })
	if err := migrations.Apply(b.Context(), st, nil); err != nil {
		b.Fatal(err)
	}
	done := filepath.Join(dir, "history-complete")
	if _, err := os.Stat(done); err == nil {
		mergeParts(b, st, dir)
		return st
	}
	// Test-only SQL. A run cut short left some batches in: their tokens make a rerun skip
	// them only within the deduplication window, so start again clean.
	if err := st.Exec(b.Context(), "TRUNCATE TABLE IF EXISTS views_raw", nil); err != nil {
		b.Fatal(err)
	}
	for _, t := range []string{"page_rollup", "dim_rollup", "page_views", "engagement_rollup", "rollup_feed"} {
		if err := st.Exec(b.Context(), "TRUNCATE TABLE IF EXISTS {t:Identifier}", store.Params{"t": t}); err != nil {
			b.Fatal(err)
		}
	}
	tot, err := storetest.History(b.Context(), st, cfg)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "history: %d events (%d valid) in %s, %.0f rows/s\n", tot.Events, tot.Valid, tot.Elapsed.Round(time.Second), float64(tot.Events)/tot.Elapsed.Seconds())
	if err := os.WriteFile(done, []byte(strconv.Itoa(tot.Events)+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	mergeParts(b, st, dir)
	return st
}

// mergeParts merges each table the stats read into one part, once per
// cached history. The history goes in as 200 inserts within minutes,
// faster than background merges fold their parts, and a read pays per
// part holding its rows (a page's breakdown 49 ms p50 on the fresh
// history's parts); a store that lived through those 30 days has long
// merged them. Test-only SQL.
func mergeParts(b *testing.B, st store.Store, dir string) {
	marker := filepath.Join(dir, "merged")
	if _, err := os.Stat(marker); err == nil {
		return
	}
	for _, t := range []string{"dim_rollup", "page_rollup", "page_views", "engagement_rollup"} {
		if err := st.Exec(b.Context(), "OPTIMIZE TABLE {t:Identifier} FINAL", store.Params{"t": t}); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		b.Fatal(err)
	}
}
