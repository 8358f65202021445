package repair_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkRecountRebuild measures what `viewcount check` and `viewcount
// repair rollups` cost: repair.Recount (all tables), each table's recount
// script (dim_rollup's for one month) and the rebuild (prepare, a fill per month, swap), on a generated history of 60
// days (three views_raw months) for 20 sites of 500 pages. Each step runs
// three times; the log has the median seconds and the process's peak RSS
// during the step (the engine runs in this process).
//
//	VIEWCOUNT_BENCH_HISTORY=1000000 go test -run '^$' -bench BenchmarkRecountRebuild -benchtime 1x -timeout 60m ./rollup/
func BenchmarkRecountRebuild(b *testing.B) {
	events := storetest.HistoryEvents(b)
	ctx := context.Background()
	s := storetest.Open(b)
	if err := migrations.Apply(ctx, s, nil); err != nil {
		b.Fatal(err)
	}
	sites := make([]string, 20)
	for i := range sites {
		sites[i] = "site" + string(rune('a'+i)) + ".example"
	}
	if _, err := storetest.History(ctx, s, storetest.HistoryConfig{Events: events, Days: 60, End: time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC),
		Sites: sites, Pages: 500, Visitors: 10_000, Seed: 12, Progress: os.Stderr}); err != nil {
		b.Fatal(err)
	}
	// Test-only SQL: let the inserts' parts merge, as a store that ran a
	// while has them.
	for _, table := range repair.Rollups() {
		if err := s.Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL", nil); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now()
	step := func(name string, f func()) {
		var secs, peaks []float64
		for range 3 {
			resetPeakRSS(b)
			began := time.Now()
			f()
			secs = append(secs, time.Since(began).Seconds())
			peaks = append(peaks, peakRSSMiB(b))
		}
		slices.Sort(secs)
		slices.Sort(peaks)
		b.Logf("%-22s median %.2f s (%.2f / %.2f / %.2f), peak RSS median %.0f MiB", name, secs[1], secs[0], secs[1], secs[2], peaks[1])
	}
	step("recount (check)", func() {
		res, err := repair.Recount(ctx, s, now, 20)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if r.Differing != 0 {
				b.Fatalf("recount %s: %d differing rows: %+v", r.Table, r.Differing, r.Examples)
			}
		}
	})
	// Each table's recount alone (dim_rollup's first month only: the
	// check runs one per month).
	months, err := s.Query(ctx, queries.Repair("dim_rollup_months")[0], store.Params{"cutoff": "1970-01-01 00:00:00"})
	if err != nil || len(months.TextRows()) == 0 {
		b.Fatalf("dim_rollup months: %v", err)
	}
	for _, table := range repair.Rollups() {
		step("recount "+table, func() {
			p := store.Params{"cutoff": "1970-01-01 00:00:00", "limit": "20", "month": months.TextRows()[0][0]}
			if _, err := s.Query(ctx, queries.Repair(table + "_recount")[0], p); err != nil {
				b.Fatalf("recount %s: %v", table, err)
			}
		})
	}
	var took map[string]time.Duration
	step("rebuild (all tables)", func() {
		took = map[string]time.Duration{}
		last := time.Now()
		err := repair.Rebuild(ctx, s, repair.RebuildOptions{Now: now, Progress: func(table string, _, _ int, _ uint64) {
			took[table] += time.Since(last)
			last = time.Now()
		}}, nil)
		if err != nil {
			b.Fatal(err)
		}
	})
	// The last run's split: from the previous table's last month to this
	// table's last month (its prepare and fills; the swap is in the next
	// table's first month).
	var split []string
	for _, table := range repair.Rollups() {
		split = append(split, table+" "+took[table].Round(10*time.Millisecond).String())
	}
	b.Logf("last rebuild by table (prepare + fills): %s", strings.Join(split, ", "))
}

// resetPeakRSS makes the kernel's peak RSS (VmHWM) start again from the
// current RSS.
func resetPeakRSS(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Logf("reset peak RSS: %v", err)
	}
}

func peakRSSMiB(b *testing.B) float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb / 1024
		}
	}
	return 0
}
