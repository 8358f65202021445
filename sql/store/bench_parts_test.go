package store_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkInsertParts is BenchmarkInsertFed with one piece changed at a
// time, on the migrated schema: what each materialized view and the
// Compact parts of migration 011 cost (docs/benchmarks/README.md, "Store
// and rollups").
// Batches of 50k rows fed every 200k show the cost per row; batches of 100
// fed every 400 rows the fixed cost per insert and per feed (cpu-us/feed
// is the feed's own CPU). feed_only feeds into no view: the copy out of
// views_raw alone. raw_only is views_raw without any feed: the
// validator's insert path alone. visits is the traffic of a site whose
// tracker reports engagement: a third of the rows are reports, and every
// valid row carries the visit stage's delta (withVisits). Test-only SQL.
//
//	go test -run '^$' -bench BenchmarkInsertParts -benchtime 40x ./sql/store/
func BenchmarkInsertParts(b *testing.B) {
	wide := []string{"views_raw", "page_rollup", "dim_rollup", "page_views", "rejected_rollup", "engagement_rollup"}
	for _, v := range []struct {
		name  string
		stmts []string
		feed  bool
	}{
		{"all", nil, true},
		{"wide_parts", func() []string {
			var out []string
			for _, t := range wide {
				out = append(out, "ALTER TABLE "+t+" MODIFY SETTING min_rows_for_wide_part = 0")
			}
			return out
		}(), true},
		{"without_page_rollup_mv", []string{"DROP VIEW page_rollup_mv"}, true},
		{"without_dim_rollup_mv", []string{"DROP VIEW dim_rollup_mv"}, true},
		{"without_page_views_mv", []string{"DROP VIEW page_views_mv"}, true},
		{"without_rejected_rollup_mv", []string{"DROP VIEW rejected_rollup_mv"}, true},
		{"without_engagement_rollup_mv", []string{"DROP VIEW engagement_rollup_mv"}, true},
		{"feed_only", []string{"DROP VIEW page_rollup_mv", "DROP VIEW dim_rollup_mv", "DROP VIEW page_views_mv",
			"DROP VIEW rejected_rollup_mv", "DROP VIEW engagement_rollup_mv"}, true},
		{"raw_only", nil, false},
	} {
		for _, c := range []struct {
			name         string
			pages, batch int
			visits       bool
		}{{"spread/batch=50000", 100_000, 50_000, false}, {"hot/batch=50000", 1, 50_000, false}, {"spread/batch=100", 100_000, 100, false},
			{"spread/visits/batch=50000", 100_000, 50_000, true}, {"spread/visits/batch=100", 100_000, 100, true}} {
			b.Run(v.name+"/"+c.name, func(b *testing.B) {
				s := migrated(b, openTestStore)
				for _, st := range v.stmts {
					mustExec(b, s, st, nil)
				}
				every := 0
				if v.feed {
					every = 4
				}
				rows := storetest.LoadRows(c.batch, uint64(c.pages), time.Now().UTC().Add(-time.Hour))
				if c.visits {
					storetest.WithVisits(rows)
				}
				fedLoop(b, s, rows, every)
			})
		}
	}
}

// BenchmarkFeedCopy is one feed's copy out of views_raw alone, without
// the inserts' background merges that BenchmarkInsertParts/feed_only
// counts in its CPU: 200k stored rows (four batches of withVisits rows,
// each with its own stream sequences), fed again and again into views_feed
// with no view attached, each run under its own token so none is skipped.
// parts=4 reads the four parts as inserted, parts=1 after they merged:
// the feed's sort by stream order costs several times more where it
// merges its chunks row by row, and how the read cuts the chunks moves
// the cost from one case to the other
// (docs/benchmarks/history/issue-22.md, "The feed's sort").
//
//	go test -run '^$' -bench BenchmarkFeedCopy -benchtime 10x ./sql/store/
func BenchmarkFeedCopy(b *testing.B) {
	for _, merged := range []bool{false, true} {
		name := "parts=4"
		if merged {
			name = "parts=1"
		}
		b.Run(name, func(b *testing.B) {
			s := migrated(b, openTestStore)
			for _, v := range []string{"page_rollup_mv", "dim_rollup_mv", "page_views_mv", "rejected_rollup_mv", "engagement_rollup_mv"} {
				mustExec(b, s, "DROP VIEW "+v, nil)
			}
			mustExec(b, s, "SYSTEM STOP MERGES views_raw", nil)
			rows := storetest.LoadRows(50_000, 100_000, time.Now().UTC().Add(-time.Hour))
			storetest.WithVisits(rows)
			for n := 1; n <= 4; n++ {
				for i := range rows {
					rows[i].Batch = uint64(n)
					rows[i].Seq = uint64((n-1)*len(rows) + i/3 + 1)
				}
				if err := s.InsertViews(b.Context(), "copy:"+strconv.Itoa(n), rows); err != nil {
					b.Fatal(err)
				}
			}
			if merged {
				mustExec(b, s, "SYSTEM START MERGES views_raw", nil)
				mustExec(b, s, "OPTIMIZE TABLE views_raw FINAL", nil)
			}
			var cpu time.Duration
			n := 0
			for b.Loop() {
				n++
				c := storetest.ProcessCPU(b)
				if err := s.Exec(b.Context(), queries.Text(queries.Feed), store.Params{"partition": strconv.Itoa(int(rows[0].Partition)),
					"first": "1", "last": "4", "since": "0", "token": "bench-copy-" + strconv.Itoa(n)}); err != nil {
					b.Fatal(err)
				}
				cpu += storetest.ProcessCPU(b) - c
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(n)/1000, "cpu-ms/feed")
		})
	}
}
