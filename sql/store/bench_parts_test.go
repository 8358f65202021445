package store_test

import (
	"testing"
	"time"
)

// BenchmarkInsertParts is BenchmarkInsertBatch with one piece of the insert
// path changed at a time, on the migrated schema: what each materialized
// view and the Compact parts of migration 011 cost (BENCHMARKS.md, "Insert
// path (migration 011)"). Batches of 50k rows show the cost per row, of
// 100 rows the fixed cost per insert (cpu-us/insert). Test-only SQL.
//
//	go test -run '^$' -bench BenchmarkInsertParts -benchtime 30x ./sql/store/
func BenchmarkInsertParts(b *testing.B) {
	wide := []string{"views_raw", "page_rollup", "dim_rollup", "page_views"}
	for _, v := range []struct {
		name  string
		stmts []string
	}{
		{"all", nil},
		{"wide_parts", func() []string {
			var out []string
			for _, t := range wide {
				out = append(out, "ALTER TABLE "+t+" MODIFY SETTING min_rows_for_wide_part = 0")
			}
			return out
		}()},
		{"without_page_rollup_mv", []string{"DROP VIEW page_rollup_mv"}},
		{"without_dim_rollup_mv", []string{"DROP VIEW dim_rollup_mv"}},
		{"without_page_views_mv", []string{"DROP VIEW page_views_mv"}},
		{"raw_only", []string{"DROP VIEW page_rollup_mv", "DROP VIEW dim_rollup_mv", "DROP VIEW page_views_mv"}},
	} {
		for _, c := range []struct {
			name         string
			pages, batch int
		}{{"spread/batch=50000", 100_000, 50_000}, {"hot/batch=50000", 1, 50_000}, {"spread/batch=100", 100_000, 100}} {
			b.Run(v.name+"/"+c.name, func(b *testing.B) {
				s := migrated(b, openTestStore)
				for _, st := range v.stmts {
					mustExec(b, s, st, nil)
				}
				insertLoop(b, s, loadRows(c.batch, uint64(c.pages), time.Now().UTC().Add(-time.Hour)))
			})
		}
	}
}
