package migrations_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkRollupGranules measures the store's count queries on
// page_rollup built with different index_granularity_bytes, the choice
// behind migration 009. A generated history (storetest.History: 10M
// events, 30 days, 1,000 pages) is rolled up once; for each size, its
// parts are copied one by one into a table of that size, which is
// swapped in under the name page_rollup so the shipped queries run. Each
// size is measured twice: with the parts as the history's inserts left
// them (background merges stopped), then merged into one part.
//
// Reported per size and state: page_count (the api's first read) p50/p99
// over 300 pages in random order, page_counts of 100 pages (a cold batch)
// and of 500 (one snapshot refresh chunk) p50/max, site_count p50.
//
// The history takes minutes, so it runs only when asked:
//
//	VIEWCOUNT_BENCH_HISTORY=1 go test -run '^$' -bench BenchmarkRollupGranules -benchtime 1x -timeout 60m ./rollup/
//
// (a number instead of 1 is the events to generate, for a quicker look).
func BenchmarkRollupGranules(b *testing.B) {
	events := storetest.HistoryEvents(b)
	const site = "history.example"
	ctx := context.Background()
	s := storetest.Open(b)
	if err := migrations.Apply(ctx, s, nil); err != nil {
		b.Fatal(err)
	}
	tot, err := storetest.History(ctx, s, storetest.HistoryConfig{Events: events, End: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Sites: []string{site}, Seed: 10, Progress: os.Stderr})
	if err != nil {
		b.Fatal(err)
	}
	pages := make([]string, 0, len(tot.Sites[site].PageDay))
	for p := range tot.Sites[site].PageDay {
		pages = append(pages, p)
	}
	slices.Sort(pages)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(pages), func(i, j int) { pages[i], pages[j] = pages[j], pages[i] })

	// Test-only SQL from here on: the benchmark's own tables and the
	// system tables.
	exec := func(q string) {
		if err := s.Exec(ctx, q, nil); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	rows := func(q string) [][]string {
		res, err := s.Query(ctx, q, nil)
		if err != nil {
			b.Fatalf("%s: %v", q, err)
		}
		return res.TextRows()
	}
	exec("SYSTEM STOP MERGES page_rollup")
	var srcParts []string
	for _, r := range rows("SELECT name FROM system.parts WHERE database = currentDatabase() AND table = 'page_rollup' AND active ORDER BY name") {
		srcParts = append(srcParts, r[0])
	}
	exec("RENAME TABLE page_rollup TO gran_src")
	shape := rows("SELECT create_table_query FROM system.tables WHERE database = currentDatabase() AND name = 'gran_src'")[0][0]
	shape = shape[strings.Index(shape, "("):strings.Index(shape, "ENGINE")]
	parts := func() string {
		r := rows("SELECT count(), sum(rows), sum(marks), formatReadableSize(sum(bytes_on_disk)) FROM system.parts WHERE database = currentDatabase() AND table = 'page_rollup' AND active")[0]
		// Rows of the granules that hold all-time rows: what one cold
		// page_count decodes per part.
		g, err := s.Query(ctx, "SELECT max(rows_in_granule), round(avg(rows_in_granule)) FROM (SELECT rows_in_granule, grain, leadInFrame(grain) OVER (PARTITION BY part_name ORDER BY mark_number ROWS BETWEEN CURRENT ROW AND 1 FOLLOWING) AS next FROM mergeTreeIndex(currentDatabase(), 'page_rollup')) WHERE rows_in_granule > 0 AND (grain = 'total' OR next = 'total')", nil)
		if err != nil || len(g.TextRows()) != 1 {
			return fmt.Sprintf("%s parts, %s rows, %s marks, %s (granules: %v)", r[0], r[1], r[2], r[3], err)
		}
		return fmt.Sprintf("%s parts, %s rows, %s marks, %s; all-time granules max %s rows, avg %s", r[0], r[1], r[2], r[3], g.TextRows()[0][0], g.TextRows()[0][1])
	}

	for _, v := range granuleVariants(b) {
		name := strconv.Itoa(v.bytes>>10) + "KiB-" + strconv.Itoa(v.rows) + "rows"
		exec("DROP TABLE IF EXISTS page_rollup SYNC")
		exec("CREATE TABLE page_rollup " + shape + " ENGINE = AggregatingMergeTree ORDER BY (site, grain, page, bucket) SETTINGS index_granularity_bytes = " + strconv.Itoa(v.bytes) + ", index_granularity = " + strconv.Itoa(v.rows))
		exec("SYSTEM STOP MERGES page_rollup")
		began := time.Now()
		for _, p := range srcParts {
			exec("INSERT INTO page_rollup SELECT * FROM gran_src WHERE _part = '" + p + "'")
		}
		b.Logf("%s: copied in %s: %s", name, time.Since(began).Round(time.Millisecond), parts())
		measureGranules(b, s, name+"/unmerged", site, pages)
		exec("SYSTEM START MERGES page_rollup")
		began = time.Now()
		exec("OPTIMIZE TABLE page_rollup FINAL")
		b.Logf("%s: merged in %s: %s", name, time.Since(began).Round(time.Millisecond), parts())
		measureGranules(b, s, name+"/merged", site, pages)
	}
}

type granules struct{ bytes, rows int }

// granuleVariants are the index_granularity_bytes and index_granularity
// pairs measured: VIEWCOUNT_BENCH_GRANULES as "bytes:rows,bytes:rows"
// (e.g. "262144:1024"), by default the table's defaults and the
// candidates.
func granuleVariants(b *testing.B) []granules {
	env := os.Getenv("VIEWCOUNT_BENCH_GRANULES")
	if env == "" {
		return []granules{{10 << 20, 8192}, {1 << 20, 8192}, {256 << 10, 8192}, {64 << 10, 8192}, {256 << 10, 1024}, {256 << 10, 256}}
	}
	var vs []granules
	for _, f := range strings.Split(env, ",") {
		by, ro, _ := strings.Cut(f, ":")
		bi, err1 := strconv.Atoi(by)
		ri, err2 := strconv.Atoi(ro)
		if err1 != nil || err2 != nil || bi <= 0 || ri <= 0 {
			b.Fatalf("VIEWCOUNT_BENCH_GRANULES: %q is not bytes:rows", f)
		}
		vs = append(vs, granules{bi, ri})
	}
	return vs
}

// measureGranules times the count queries against the current page_rollup.
func measureGranules(b *testing.B, s store.Store, name, site string, pages []string) {
	query := func(b *testing.B, q string, p store.Params) time.Duration {
		start := time.Now()
		res, err := s.Query(b.Context(), queries.Text(q), p)
		took := time.Since(start)
		if err != nil || len(res.TextRows()) == 0 {
			b.Fatalf("%s: %v", q, err)
		}
		return took
	}
	report := func(b *testing.B, took []time.Duration) {
		slices.Sort(took)
		p := func(pct int) time.Duration { return took[(len(took)*pct+99)/100-1] }
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(p(50)), "p50-ms")
		b.ReportMetric(ms(p(99)), "p99-ms")
		b.ReportMetric(ms(took[len(took)-1]), "max-ms")
		b.Logf("%s: %d queries, p50 %s, p99 %s, max %s", b.Name(), len(took), p(50), p(99), took[len(took)-1])
	}
	b.Run(name+"/page_count", func(b *testing.B) {
		var took []time.Duration
		for i := range min(300, len(pages)) {
			took = append(took, query(b, queries.PageCount, store.Params{"site": site, "page": pages[i]}))
		}
		report(b, took)
	})
	for _, n := range []int{100, 500} {
		b.Run(name+"/page_counts_"+strconv.Itoa(n), func(b *testing.B) {
			var took []time.Duration
			for i := 0; i+n <= len(pages) && len(took) < 10; i += n {
				took = append(took, query(b, queries.PageCounts, store.Params{"site": site, "pages": store.ArrayParam(pages[i : i+n])}))
			}
			report(b, took)
		})
	}
	b.Run(name+"/site_count", func(b *testing.B) {
		var took []time.Duration
		for range 5 {
			took = append(took, query(b, queries.SiteCount, store.Params{"site": site}))
		}
		report(b, took)
	})
}
