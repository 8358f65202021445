package repair_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// historyStore returns a migrated store holding a generated history across
// a month boundary (two views_raw partitions), inserted in several batches
// through the materialized views, with every dimension, rejected events,
// and visits with engagement reports (some of February's received in
// March).
func historyStore(t *testing.T) store.Store {
	t.Helper()
	s := migrated(t)
	// 700 visitors a day: the day sketches pass 128 ids, so dim_rollup's
	// precision-12 sketches are HyperLogLogs, not exact sets.
	cfg := storetest.HistoryConfig{Events: 12_000, Days: 3, End: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC),
		Sites: []string{"a.example", "b.example"}, Pages: 30, Visitors: 700, Seed: 11, Batch: 2_500, Visits: true}
	if _, err := storetest.History(t.Context(), s, cfg); err != nil {
		t.Fatal(err)
	}
	return s
}

// recountDiffering returns each rollup's number of differing rows.
func recountDiffering(t *testing.T, s store.Store, now time.Time) map[string]uint64 {
	t.Helper()
	res, err := repair.Recount(t.Context(), s, now, 3)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, r := range res {
		out[r.Table] = r.Differing
		if uint64(len(r.Examples)) > r.Differing || len(r.Examples) > 3 {
			t.Errorf("%s: %d examples of %d differing rows, limit 3", r.Table, len(r.Examples), r.Differing)
		}
	}
	return out
}

// The rebuild's fill SELECTs are the materialized views' own: rows written
// by the views insert by insert and rows rebuilt a month at a time read
// the same, row for row, in all five tables; the recount agrees before
// and after.
func TestRebuildEqualsMaterializedViews(t *testing.T) {
	s := historyStore(t)
	now := time.Now()
	want := storetest.DerivedRows(t, s)
	for table, n := range map[string]int{"page_rollup": 1000, "dim_rollup": 1000, "page_views": 9000, "rejected_rollup": 100, "engagement_rollup": 1000} {
		if len(want[table]) < n {
			t.Fatalf("%s holds %d rows, want at least %d: the history did not reach it", table, len(want[table]), n)
		}
	}
	if got := queryCell(t, s, "SELECT count() FROM page_views"); got != queryCell(t, s, "SELECT count() FROM views_raw WHERE verdict = 'valid' AND kind = 0") {
		t.Fatalf("page_views holds %s rows, not every valid view", got)
	}
	if got := queryCell(t, s, "SELECT sum(events) FROM rejected_rollup"); got != queryCell(t, s, "SELECT count() FROM views_raw WHERE verdict != 'valid' AND kind = 0") {
		t.Fatalf("rejected_rollup counts %s events, not every rejected view", got)
	}
	// Reports of February's views received in March count in February.
	if got := queryCell(t, s, "SELECT count() FROM views_raw WHERE kind = 1 AND visit_set AND toYYYYMM(time) = 202603 AND toYYYYMM(view_time) = 202602"); got == "0" {
		t.Fatal("no report crosses the month: the history tests nothing of engagement_rollup's months")
	}
	if got := queryCell(t, s, "SELECT sum(engagements) FROM engagement_rollup WHERE dim = 'total' AND grain = 'day'"); got != queryCell(t, s, "SELECT count() FROM views_raw WHERE verdict = 'valid' AND kind = 1") {
		t.Fatalf("engagement_rollup counts %s engagements, not every accepted report", got)
	}
	if d := recountDiffering(t, s, now); differingAll(d) != 0 || len(d) != 5 {
		t.Fatalf("recount of a sound store = %v, want 0 for each of the five tables", d)
	}

	var progress []string
	err := repair.Rebuild(t.Context(), s, repair.RebuildOptions{Now: now, Progress: func(table string, done, total int, rows uint64) {
		progress = append(progress, fmt.Sprintf("%s %d/%d %d", table, done, total, rows))
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	feb, mar := queryCell(t, s, "SELECT count() FROM views_raw WHERE toYYYYMM(time) = 202602"), queryCell(t, s, "SELECT count() FROM views_raw WHERE toYYYYMM(time) = 202603")
	var wantProgress []string
	for _, table := range []string{"page_rollup", "dim_rollup", "page_views", "rejected_rollup", "engagement_rollup"} {
		wantProgress = append(wantProgress, table+" 1/2 "+feb, table+" 2/2 "+mar)
	}
	if strings.Join(progress, "\n") != strings.Join(wantProgress, "\n") {
		t.Errorf("progress:\n%s\nwant:\n%s", strings.Join(progress, "\n"), strings.Join(wantProgress, "\n"))
	}
	if diff := storetest.DiffRows(storetest.DerivedRows(t, s), want); diff != "" {
		t.Errorf("rebuilt rows differ from the views':\n%s", diff)
	}
	if d := recountDiffering(t, s, now); differingAll(d) != 0 {
		t.Errorf("recount after the rebuild = %v", d)
	}
	if n := queryCell(t, s, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name LIKE '%_rebuild'"); n != "0" {
		t.Errorf("%s staging tables left behind", n)
	}
}

// A damaged dim_rollup part, a damaged page_views part, a damaged
// rejected_rollup part and a damaged engagement_rollup part are reported
// like page_rollup's (health part store_parts, the repair named), the
// recount finds the rows they held, and a rebuild restores every row.
func TestBrokenDimAndPageViewsPartsAreRebuilt(t *testing.T) {
	s := historyStore(t)
	ctx := t.Context()
	now := time.Now()
	want := storetest.DerivedRows(t, s)

	storetest.BreakPart(t, s, "dim_rollup")
	storetest.BreakPart(t, s, "page_views")
	storetest.BreakPart(t, s, "rejected_rollup")
	storetest.BreakPart(t, s, "engagement_rollup")
	parts, err := repair.BrokenParts(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 4 || parts[0].Table != "dim_rollup" || parts[1].Table != "engagement_rollup" || parts[2].Table != "page_views" ||
		parts[3].Table != "rejected_rollup" || len(repair.Harmful(parts)) != 4 {
		t.Fatalf("broken parts = %+v, want one of dim_rollup, engagement_rollup, page_views and rejected_rollup", parts)
	}
	p := repair.PartsProblem(parts)
	if p == nil || !strings.Contains(p.Error(), "dim_rollup (1), engagement_rollup (1), page_views (1), rejected_rollup (1)") || !strings.Contains(p.Error(), "viewcount repair rollups") {
		t.Errorf("problem = %v, want the four tables and the repair", p)
	}
	for _, table := range []string{"dim_rollup", "page_views", "rejected_rollup", "engagement_rollup"} {
		if !repair.IsRollup(table) || !strings.Contains(repair.Advice(table), "viewcount repair rollups") {
			t.Errorf("%s: IsRollup %v, advice %q", table, repair.IsRollup(table), repair.Advice(table))
		}
	}
	d := recountDiffering(t, s, now)
	if d["page_rollup"] != 0 || d["dim_rollup"] == 0 || d["page_views"] == 0 || d["rejected_rollup"] == 0 || d["engagement_rollup"] == 0 {
		t.Errorf("recount of the damaged tables = %v, want differences in dim_rollup, page_views, rejected_rollup and engagement_rollup only", d)
	}
	res, err := repair.Recount(ctx, s, now, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res[1:] {
		e := r.Examples[0]
		switch r.Table {
		case "dim_rollup":
			if e.Dim == "" || e.StoredViews >= e.RecountViews {
				t.Errorf("dim_rollup example %+v: want a dim and fewer stored views than recounted", e)
			}
		case "page_views":
			if e.Grain != "day" || e.Page == "" || e.StoredViews >= e.RecountViews || e.StoredChecksum == e.RecountChecksum {
				t.Errorf("page_views example %+v: want a page's day with fewer stored views and another checksum", e)
			}
		case "rejected_rollup":
			if e.Grain != "hour" || e.Dim == "" || e.Dim == "valid" || e.StoredViews >= e.RecountViews || e.RecountLast == "" {
				t.Errorf("rejected_rollup example %+v: want a reason's hour with fewer stored events and the newest event's time", e)
			}
		case "engagement_rollup":
			if e.Dim == "" || e.StoredFigures == nil || e.RecountFigures == nil || len(e.StoredFigures.Differing(*e.RecountFigures)) == 0 {
				t.Errorf("engagement_rollup example %+v: want a dim's row with the figures that differ", e)
			}
		}
	}

	if err := repair.Rebuild(ctx, s, repair.RebuildOptions{Now: now}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := storetest.DiffRows(storetest.DerivedRows(t, s), want); diff != "" {
		t.Errorf("rebuilt rows differ from the original:\n%s", diff)
	}
	if parts, err := repair.BrokenParts(ctx, s); err != nil || len(parts) != 0 {
		t.Errorf("broken parts after the rebuild = %+v, %v; want none (dropped)", parts, err)
	}
	if d := recountDiffering(t, s, now); differingAll(d) != 0 {
		t.Errorf("recount after the rebuild = %v", d)
	}
}

// A rebuild that fails half way leaves each table it had not swapped yet
// as it was, and running it again starts over and completes. The failures
// are real engine errors: the staging table disappears under the fill of
// dim_rollup's second month, then under page_views' swap.
func TestInterruptedRebuildLeavesTablesAsTheyWere(t *testing.T) {
	s := historyStore(t)
	ctx := t.Context()
	now := time.Now()
	want := storetest.DerivedRows(t, s)
	storetest.BreakPart(t, s, "dim_rollup")
	damaged := storetest.DerivedRows(t, s)
	if len(damaged["dim_rollup"]) >= len(want["dim_rollup"]) {
		t.Fatalf("breaking a dim_rollup part left %d of %d rows", len(damaged["dim_rollup"]), len(want["dim_rollup"]))
	}
	dropAfter := func(table string, month int) func(string, int, int, uint64) {
		return func(tb string, done, _ int, _ uint64) {
			if tb == table && done == month {
				// Test-only SQL: the fault.
				if err := s.Exec(ctx, "DROP TABLE "+table+"_rebuild SYNC", nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}

	err := repair.Rebuild(ctx, s, repair.RebuildOptions{Now: now, Progress: dropAfter("dim_rollup", 1)}, nil)
	if err == nil || !strings.Contains(err.Error(), "dim_rollup_fill") {
		t.Fatalf("rebuild with the staging table gone = %v, want dim_rollup_fill's error", err)
	}
	got := storetest.DerivedRows(t, s)
	if diff := storetest.DiffRows(got, map[string][]string{"page_rollup": want["page_rollup"], "dim_rollup": damaged["dim_rollup"],
		"page_views": want["page_views"], "rejected_rollup": want["rejected_rollup"], "engagement_rollup": want["engagement_rollup"]}); diff != "" {
		t.Errorf("after the failed rebuild (page_rollup rebuilt, dim_rollup as it was, page_views and rejected_rollup untouched):\n%s", diff)
	}
	if parts, _ := repair.BrokenParts(ctx, s); len(parts) != 1 {
		t.Errorf("broken parts after the failed rebuild = %+v, want dim_rollup's still there", parts)
	}

	err = repair.Rebuild(ctx, s, repair.RebuildOptions{Now: now, Progress: dropAfter("page_views", 2)}, nil)
	if err == nil || !strings.Contains(err.Error(), "page_views_swap") {
		t.Fatalf("rebuild with page_views' staging table gone = %v, want page_views_swap's error", err)
	}
	if diff := storetest.DiffRows(storetest.DerivedRows(t, s), want); diff != "" {
		t.Errorf("after the second failed rebuild (dim_rollup rebuilt, page_views as it was):\n%s", diff)
	}

	if err := repair.Rebuild(ctx, s, repair.RebuildOptions{Now: now}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := storetest.DiffRows(storetest.DerivedRows(t, s), want); diff != "" {
		t.Errorf("after the rerun:\n%s", diff)
	}
	if n := queryCell(t, s, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name LIKE '%_rebuild'"); n != "0" {
		t.Errorf("%s staging tables left behind", n)
	}
	if parts, err := repair.BrokenParts(ctx, s); err != nil || len(parts) != 0 {
		t.Errorf("broken parts after the rerun = %+v, %v", parts, err)
	}
}

// A sketch holding exactly as many visitors as it counts exactly (128 for
// dim_rollup's, 4096 for page_rollup's) turns into a HyperLogLog when one
// more, already counted, visitor is merged into it: the stored row then
// reads an estimate where a recount merged in another order reads the
// exact number. The recount compares such rows by their views alone, so a
// sound store is not reported.
func TestRecountSketchBoundary(t *testing.T) {
	s := migrated(t)
	day := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	insert := func(token string, visitors []uint64, site, page string) {
		t.Helper()
		rows := make([]viewcount.Verdict, len(visitors))
		for i, v := range visitors {
			rows[i] = viewcount.Verdict{Event: viewcount.Event{Time: day.Add(time.Duration(i%1400) * time.Minute), Site: site, Page: page,
				ID: fmt.Sprintf("%s-%d", token, i), Visitor: v}, Reason: viewcount.Valid}
		}
		if err := storetest.InsertFed(t.Context(), s, token, rows); err != nil {
			t.Fatal(err)
		}
	}
	// The id sets are ones whose HyperLogLog estimate is not the exact
	// number (126 and 4098), so the two readings differ.
	ids := func(n int, mult uint64) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = uint64(i) * mult
		}
		return out
	}
	insert("d1", ids(128, 1), "dim.example", "/")
	insert("d2", ids(1, 1), "dim.example", "/")        // visitor 0 again: the day's sketch of 128 becomes a HyperLogLog
	insert("p1", ids(4096, 7919), "page.example", "/") // one page: its day and all-time sketches hold 4096
	insert("p2", ids(1, 1), "page.example", "/")
	for _, table := range []string{"dim_rollup", "page_rollup"} { // each insert's row, then the next one's merged into it
		if err := s.Exec(t.Context(), "OPTIMIZE TABLE "+table+" FINAL", nil); err != nil {
			t.Fatal(err)
		}
	}
	dim := queryCell(t, s, "SELECT uniqCombined64Merge(12)(uniques) FROM dim_rollup WHERE site = 'dim.example' AND dim = 'total' AND grain = 'day'")
	page := queryCell(t, s, "SELECT uniqCombined64Merge(uniques) FROM page_rollup WHERE site = 'page.example' AND grain = 'day'")
	if dim == "128" || page == "4096" {
		t.Fatalf("stored uniques of 128 and 4096 visitors: %s, %s; want HyperLogLog estimates (the case this test is about)", dim, page)
	}
	if d := recountDiffering(t, s, time.Now()); d["page_rollup"] != 0 || d["dim_rollup"] != 0 || d["page_views"] != 0 {
		t.Errorf("recount at the sketches' exact limit = %v, want no difference", d)
	}
	// Views still count: one view more in the rollups is a difference.
	if err := s.Exec(t.Context(), "INSERT INTO dim_rollup SELECT grain, site, dim, page, value, bucket, 1, uniqCombined64State(12)(toUInt64(0)) FROM dim_rollup WHERE site = 'dim.example' AND dim = 'total' AND grain = 'day' GROUP BY ALL", nil); err != nil {
		t.Fatal(err)
	}
	if d := recountDiffering(t, s, time.Now()); d["dim_rollup"] != 1 {
		t.Errorf("recount with one view too many = %v, want dim_rollup's one row", d)
	}
}

// differingAll is the differing rows of every rollup.
func differingAll(d map[string]uint64) uint64 {
	var n uint64
	for _, v := range d {
		n += v
	}
	return n
}
