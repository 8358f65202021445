package repair_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// migrated returns a fresh store with the schema applied.
func migrated(t *testing.T) store.Store {
	t.Helper()
	s := storetest.Migrated(t)
	return s
}

// insertViews inserts n valid views of site at times spread over days
// (one insert, so one part per table), visitors and pages varied.
func insertViews(t *testing.T, s store.Store, token, site string, at time.Time, n int) {
	t.Helper()
	rows := make([]viewcount.Verdict, n)
	for i := range rows {
		rows[i] = viewcount.Verdict{Event: viewcount.Event{
			Time: at.Add(time.Duration(i) * 7 * time.Minute).UTC().Truncate(time.Millisecond),
			Site: site, Page: fmt.Sprintf("/p%d", i%5), ID: fmt.Sprintf("%s-%d", token, i), Visitor: uint64(i % 37),
		}, Reason: viewcount.Valid, Seq: uint64(i + 1)}
	}
	if err := storetest.InsertFed(t.Context(), s, token, rows); err != nil {
		t.Fatal(err)
	}
}

// rollupState is every rollup row aggregated, as a reader sees it.
func rollupState(t *testing.T, s store.Store) string {
	t.Helper()
	res, err := s.Query(t.Context(), `SELECT grain, site, page, bucket, sum(views), uniqCombined64Merge(uniques)
		FROM page_rollup GROUP BY grain, site, page, bucket ORDER BY grain, site, page, bucket`, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(res.TextRows())
}

func queryCell(t *testing.T, s store.Store, q string) string {
	t.Helper()
	res, err := s.Query(t.Context(), q, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(res.TextRows()) != 1 || len(res.TextRows()[0]) != 1 {
		t.Fatalf("%s: %q", q, res.TextRows())
	}
	return res.TextRows()[0][0]
}

func siteTotal(t *testing.T, s store.Store, site string) string {
	t.Helper()
	return queryCell(t, s, "SELECT toString(sum(views)) || '/' || toString(uniqCombined64Merge(uniques)) FROM page_rollup WHERE grain = 'total' AND site = '"+site+"'")
}

// A truncated rollup part must not be set aside silently while a site's
// count falls (docs/operations.md, Recovery): it is logged at ERROR level
// naming the table, the part and the repair, the health part fails, and a
// rebuild restores the counts exactly (equal to the recount) and clears the
// health.
func TestBrokenRollupPartIsLoudAndRebuilt(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	now := time.Now().UTC()
	insertViews(t, s, "b1", "a.example", now.AddDate(0, 0, -40), 300) // another month, another views_raw partition
	insertViews(t, s, "b2", "a.example", now.Add(-2*time.Hour), 200)
	insertViews(t, s, "b3", "b.example", now.Add(-time.Hour), 50)
	want := rollupState(t, s)
	wantA := siteTotal(t, s, "a.example")

	part := storetest.BreakPart(t, s, "page_rollup")
	if got := siteTotal(t, s, "a.example"); got == wantA {
		t.Fatalf("breaking part %s changed nothing (%s): the test does not damage the store", part, got)
	}

	var logs bytes.Buffer
	health := viewcount.NewMetrics()
	mon := repair.NewPartsMonitor(s, health, time.Minute, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := mon.Check(ctx); err != nil {
		t.Fatal(err)
	}
	problem := health.Failing()[repair.HealthPart]
	if !strings.Contains(problem, "page_rollup (1)") || !strings.Contains(problem, "viewcount repair rollups") {
		t.Errorf("health store_parts = %q, want the table and the repair command", problem)
	}
	for _, want := range []string{"level=ERROR", "component=store_parts", "table=page_rollup", "part=broken-on-start_" + part, "reason=broken-on-start", "viewcount repair rollups"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	// Seen once, logged once: the health stays failing, the log quiet.
	logs.Reset()
	if err := mon.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 || health.Failing()[repair.HealthPart] == "" {
		t.Errorf("second check: log %q, health %v", logs.String(), health.Failing())
	}

	diffs, err := repair.Recount(ctx, s, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != len(repair.Rollups()) || diffs[0].Table != "page_rollup" || diffs[0].Differing == 0 || len(diffs[0].Examples) == 0 || len(diffs[0].Examples) > 10 ||
		differing(diffs[1:]) != 0 {
		t.Fatalf("recount of the damaged rollup = %+v, want differences in page_rollup only", diffs)
	}

	var progress []string
	err = repair.Rebuild(ctx, s, repair.RebuildOptions{Now: now, Progress: func(table string, done, total int, rows uint64) {
		progress = append(progress, fmt.Sprintf("%s %d/%d %d", table, done, total, rows))
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	months := queryCell(t, s, "SELECT uniqExact(toYYYYMM(time)) FROM views_raw")
	if last := fmt.Sprintf("engagement_rollup %s/%s", months, months); fmt.Sprint(len(progress)/len(repair.Rollups())) != months || !strings.HasPrefix(progress[len(progress)-1], last) {
		t.Errorf("progress = %q, want one line per table and views_raw month", progress)
	}
	if got := rollupState(t, s); got != want {
		t.Errorf("rebuilt rollup differs from the original:\n got %s\nwant %s", got, want)
	}
	diffs, err = repair.Recount(ctx, s, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	if differing(diffs) != 0 {
		t.Errorf("recount after rebuild: %+v", diffs)
	}
	if err := mon.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if f := health.Failing(); len(f) != 0 {
		t.Errorf("health after rebuild: %v", f)
	}
	if !strings.Contains(logs.String(), "no damaged store parts left") {
		t.Errorf("clearing not logged:\n%s", logs.String())
	}
	// New views still reach the rebuilt rollup through the view.
	insertViews(t, s, "b4", "b.example", now, 1)
	if got := siteTotal(t, s, "b.example"); !strings.HasPrefix(got, "51/") {
		t.Errorf("b.example after one more view = %s, want 51 views", got)
	}
}

// A broken views_raw part is a loss of source rows: it is reported with
// what the rollups hold beyond views_raw, per site.
func TestBrokenRawPartReportsLoss(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	now := time.Now().UTC()
	// r1's 120 views span 14 hours: they start on the 10th of last month so
	// that they are all in the past and in one monthly partition (one part)
	// whatever the date the test runs on.
	start := time.Date(now.Year(), now.Month()-1, 10, 0, 0, 0, 0, time.UTC)
	insertViews(t, s, "r1", "a.example", start, 120)
	insertViews(t, s, "r2", "b.example", start.AddDate(0, 0, 1), 30)
	storetest.BreakPart(t, s, "views_raw") // the lowest part name: r1's

	parts, err := repair.BrokenParts(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 || parts[0].Table != "views_raw" || parts[0].Reason != "broken-on-start" {
		t.Fatalf("broken parts = %+v", parts)
	}
	if p := repair.PartsProblem(parts); p == nil || !strings.Contains(p.Error(), "views_raw lost events") {
		t.Errorf("problem = %v", p)
	}
	if a := repair.Advice("views_raw"); !strings.Contains(a, "--force") || !strings.Contains(a, "--retention") {
		t.Errorf("advice for views_raw = %q", a)
	}
	lost, err := repair.RawLost(ctx, s, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 1 || lost[0] != (repair.Lost{Site: "a.example", Stored: 120, Raw: 0, Lost: 120}) {
		t.Errorf("lost = %+v, want a.example's 120 views", lost)
	}
}

// Raw events expire after the raw retention; the rollups keep them, and
// the recount and the rebuild take the expired days from the rollups.
func TestRawRetentionExpiresRawKeepsRollups(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	days, err := migrations.RawRetentionDays(ctx, s)
	if err != nil || days != 0 {
		t.Fatalf("retention after migrate = %d, %v; want none (serve sets it)", days, err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	if err := migrations.ApplyRawRetention(ctx, s, 400, logger); err != nil {
		t.Fatal(err)
	}
	// Stored and fed while the retention still kept them: the feed reads
	// views_raw, so a row that expires before it is fed (one received
	// longer ago than the retention) is not counted.
	now := time.Now().UTC()
	insertViews(t, s, "old", "a.example", now.AddDate(0, 0, -60), 100)
	if err := migrations.ApplyRawRetention(ctx, s, 30, logger); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"views_raw", "page_views", "rejected_rollup"} {
		if got := queryCell(t, s, "SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = '"+table+"'"); !strings.Contains(got, "TTL toDateTime(time) + toIntervalDay(_CAST(30") || !strings.Contains(got, "ttl_only_drop_parts = 1") {
			t.Errorf("%s has no 30-day TTL dropping whole parts: %s", table, got)
		}
	}
	if days, _ := migrations.RawRetentionDays(ctx, s); days != 30 {
		t.Errorf("retention = %d, want 30", days)
	}
	if !strings.Contains(logs.String(), "table=views_raw from_days=400 to_days=30") || !strings.Contains(logs.String(), "table=page_views from_days=400 to_days=30") ||
		!strings.Contains(logs.String(), "table=rejected_rollup from_days=400 to_days=30") {
		t.Errorf("change not logged: %s", logs.String())
	}
	logs.Reset()
	if err := migrations.ApplyRawRetention(ctx, s, 30, logger); err != nil || logs.Len() != 0 {
		t.Errorf("unchanged retention: err %v, log %q", err, logs.String())
	}

	insertViews(t, s, "new", "a.example", now.Add(-time.Hour), 40)
	want := rollupState(t, s)
	for _, table := range []string{"views_raw", "page_views"} {
		if err := s.Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL", nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := queryCell(t, s, "SELECT count() FROM views_raw"); got != "40" {
		t.Errorf("views_raw after the TTL = %s rows, want the 40 recent ones", got)
	}
	if got := queryCell(t, s, "SELECT count() FROM page_views"); got != "40" {
		t.Errorf("page_views after the TTL = %s rows, want the 40 recent ones", got)
	}
	if got := siteTotal(t, s, "a.example"); !strings.HasPrefix(got, "140/") {
		t.Errorf("rollup total after the TTL = %s, want 140 views", got)
	}
	diffs, err := repair.Recount(ctx, s, now, 10)
	if err != nil || len(diffs) != len(repair.Rollups()) || differing(diffs) != 0 {
		t.Errorf("recount with expired raw rows = %+v, %v; want no difference", diffs, err)
	}
	// What the TTL left of every table, dim_rollup's rows of the old days
	// and page_views' of the new ones included.
	wantAll := storetest.DerivedRows(t, s)
	if err := repair.Rebuild(ctx, s, repair.RebuildOptions{Now: now}, nil); err != nil {
		t.Fatal(err)
	}
	if got := rollupState(t, s); got != want {
		t.Errorf("rebuild lost what the TTL removed:\n got %s\nwant %s", got, want)
	}
	if diff := storetest.DiffRows(storetest.DerivedRows(t, s), wantAll); diff != "" {
		t.Errorf("rebuild changed rows:\n%s", diff)
	}
	if got := queryCell(t, s, "SELECT sum(views) FROM dim_rollup WHERE dim = 'total' AND grain = 'day'"); got != "140" {
		t.Errorf("dim_rollup's day total after the rebuild = %s, want 140 (100 of them before the cutoff)", got)
	}
}

// differing sums the differing rows of every rollup.
func differing(diffs []repair.RecountResult) uint64 {
	var n uint64
	for _, d := range diffs {
		n += d.Differing
	}
	return n
}

func TestRetentionDays(t *testing.T) {
	f := func(d time.Duration, want int) {
		t.Helper()
		if got := migrations.RetentionDays(d); got != want {
			t.Errorf("RetentionDays(%s) = %d, want %d", d, got, want)
		}
	}
	f(9600*time.Hour, 400)
	f(72*time.Hour, 3)
	f(73*time.Hour, 4)
	f(time.Hour, 1)
}

// An outdated part (merged already, waiting for deletion, as a crash
// leaves them) set aside as damaged misses nothing: it is logged as a
// warning and the health stays good.
func TestBrokenOutdatedPartIsHarmless(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	now := time.Now().UTC()
	insertViews(t, s, "o1", "a.example", now.Add(-2*time.Hour), 30)
	insertViews(t, s, "o2", "a.example", now.Add(-time.Hour), 20)
	if err := s.Exec(ctx, "OPTIMIZE TABLE views_raw FINAL", nil); err != nil {
		t.Fatal(err)
	}
	part := storetest.BreakOutdatedPart(t, s, "views_raw")

	var logs bytes.Buffer
	health := viewcount.NewMetrics()
	mon := repair.NewPartsMonitor(s, health, time.Minute, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := mon.Check(ctx); err != nil {
		t.Fatal(err)
	}
	parts, err := repair.BrokenParts(ctx, s)
	if err != nil || len(parts) != 1 || !parts[0].Covered || len(repair.Harmful(parts)) != 0 {
		t.Fatalf("parts = %+v, %v; want one covered part", parts, err)
	}
	if f := health.Failing(); len(f) != 0 {
		t.Errorf("health = %v, want healthy: no row is missing", f)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "part=broken-on-start_"+part) || strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("log:\n%s", logs.String())
	}
	if diffs, err := repair.Recount(ctx, s, now, 5); err != nil || differing(diffs) != 0 {
		t.Errorf("recount = %+v, %v", diffs, err)
	}
}

// Damage that appears while the process runs is found by the periodic
// check, and Run stops when its context is cancelled.
func TestPartsMonitorRunFindsLaterDamage(t *testing.T) {
	s := migrated(t)
	insertViews(t, s, "m1", "a.example", time.Now().UTC().Add(-time.Hour), 10)
	health := viewcount.NewMetrics()
	mon := repair.NewPartsMonitor(s, health, 20*time.Millisecond, nil)
	if err := mon.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mon.Run(ctx) }()
	storetest.BreakPart(t, s, "page_rollup")
	deadline := time.Now().Add(10 * time.Second)
	for health.Failing()[repair.HealthPart] == "" {
		if time.Now().After(deadline) {
			t.Fatal("the periodic check did not report the damaged part within 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil on cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
