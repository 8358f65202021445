package storetest

import (
	"context"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"os"
	"strconv"
	"testing"
)

// SiteRows reads site's rows in every table with a site column (the
// tables a site delete empties), as tests check them before and after.
func SiteRows(tb testing.TB, st store.Store, site string) map[string]uint64 {
	tb.Helper()
	ctx := context.Background()
	res, err := st.Query(ctx, queries.Text(queries.SiteTables), nil)
	if err != nil {
		tb.Fatal(err)
	}
	out := map[string]uint64{}
	tables, err := store.ScanAll[queries.SiteTablesRow](res)
	if err != nil {
		tb.Fatal(err)
	}
	for _, t := range tables {
		n, err := store.Select[queries.SiteRowsRow](ctx, st, queries.Text(queries.SiteRows), store.Params{"table": t.Name, "site": site})
		if err != nil || len(n) != 1 {
			tb.Fatalf("rows of %s in %s: %v %v", site, t.Name, n, err)
		}
		out[t.Name] = n[0].Rows
	}
	return out
}

// HistoryEvents is the size of the generated history a benchmark over
// one (storetest.History) should use: VIEWCOUNT_BENCH_HISTORY=1 means the
// issue's 10M events, a larger number that many. Unset, the benchmark is
// skipped: generating the history takes minutes.
func HistoryEvents(b *testing.B) int {
	b.Helper()
	env := os.Getenv("VIEWCOUNT_BENCH_HISTORY")
	if env == "" {
		b.Skip("set VIEWCOUNT_BENCH_HISTORY=1 to generate 10M events (minutes) and measure")
	}
	events, _ := strconv.Atoi(env)
	if events <= 1 {
		events = 10_000_000
	}
	return events
}
