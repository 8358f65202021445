package migrations_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Migration 022 on a store with data: the views and engagement reports
// the feed has taken get their AS rows in dim_rollup and engagement_rollup
// once, and those of a partition's latest feed that a crash cut are left
// to the feed, which redoes it at the next start: on partition 0 both
// feeds ran (the rollups drop the repeat, so the backfill counts the
// latest), on partition 1 the latest was recorded and never ran (the redo
// counts it, AS rows included). A crash right after the backfills and a
// rerun copy nothing twice; then every AS adds up to the site's totals and
// the rollups equal a recount of views_raw.
func TestMigrateASNBackfills(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	ms := applyBefore(t, s, 22)
	var m022 migrations.Migration
	for _, m := range ms {
		if m.Version == 22 {
			m022 = m
		}
	}

	at := time.Date(2026, 10, 31, 22, 40, 0, 0, time.UTC)
	asns := []uint32{16509, 24940, 3320}
	// Views (a fifth bot_ua) each opening a visit, and after every third
	// valid view an engagement report of it: engaged 15 s, scrolled half.
	verdicts := func(token string, partition, n int) []viewcount.Verdict {
		vs := make([]viewcount.Verdict, 0, n)
		for i := range n {
			t := at.Add(time.Duration(i) * 7 * time.Minute)
			if i%4 == 3 && vs[i-1].Reason == viewcount.Valid && vs[i-1].Kind == viewcount.KindView {
				v := vs[i-1]
				v.Kind, v.ID, v.Time = viewcount.KindEngagement, token+strconv.Itoa(i), v.Time.Add(20*time.Second)
				v.Seq = uint64(i + 1)
				v.Engagement = viewcount.Engagement{EngagedMS: 15_000, Scroll: 50, AgeMS: 20_000}
				v.Visit = viewcount.VisitDelta{Set: true, ViewTime: vs[i-1].Time, VisitStart: vs[i-1].Time, EntryPage: "/",
					EngagedMS: 15_000, VisitMS: 20_000, Bounces: -1, EngagedFrom: -1, EngagedTo: viewcount.EngagedBucket(15_000),
					ScrollFrom: -1, ScrollTo: viewcount.ScrollBucket(50)}
				vs = append(vs, v)
				continue
			}
			v := viewcount.Verdict{Event: viewcount.Event{Time: t, Site: "a.example", Page: "/p" + strconv.Itoa(i%3),
				UA: "Mozilla/5.0", ID: token + strconv.Itoa(i), Visitor: uint64(i % 5), Source: viewcount.SourceBeacon, ASN: asns[i%3]},
				Reason: viewcount.Valid, Partition: uint16(partition), Seq: uint64(i + 1), Dims: viewcount.Dims{Device: "desktop", Browser: "Firefox"}}
			if i%5 == 4 {
				v.Reason = viewcount.BotUA
			} else {
				v.Visit = viewcount.VisitDelta{Set: true, ViewTime: t, VisitStart: t, EntryPage: v.Page, Visits: 1, Bounces: 1,
					EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
			}
			vs = append(vs, v)
		}
		return vs
	}
	for _, b := range []struct {
		token     string
		partition int
	}{{"p0-a", 0}, {"p0-b", 0}, {"p1-a", 1}} {
		if err := storetest.InsertFed(ctx, s, b.token, verdicts(b.token, b.partition, 40)); err != nil {
			t.Fatal(err)
		}
	}
	cut := verdicts("p1-b", 1, 40)
	if err := storetest.NumberBatch(ctx, s, cut); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertViews(ctx, "p1-b", cut); err != nil {
		t.Fatal(err)
	}
	fed := queryCell(t, s, "SELECT max(last) FROM rollup_feed WHERE partition = 1")
	last, _ := strconv.ParseUint(fed, 10, 64)
	if err := feed.Record(ctx, s, feed.Range{Partition: 1, First: last + 1, Last: cut[0].Batch}); err != nil {
		t.Fatal(err)
	}
	// What the backfill must count: every valid view but partition 1's
	// unfed batch.
	wantCopy := queryCell(t, s, "SELECT toString(count()) FROM views_raw WHERE verdict = 'valid' AND kind = 0 AND (partition = 0 OR batch <= "+fed+")")
	all := queryCell(t, s, "SELECT toString(count()) FROM views_raw WHERE verdict = 'valid' AND kind = 0")
	if wantCopy == "0" || wantCopy == all {
		t.Fatalf("%s of %s valid views to copy: the history tests nothing", wantCopy, all)
	}

	copyStmts := 0
	for i, st := range m022.Statements {
		if strings.Contains(st, "INSERT INTO engagement_rollup") {
			copyStmts = i + 1
		}
	}
	if copyStmts != 4 {
		t.Fatalf("migration 022: the engagement backfill is statement %d, want 4 (dim backfill, DROP, CREATE, it)", copyStmts)
	}
	asnViews := func() string {
		return queryCell(t, s, "SELECT toString(groupArray((toString(grain), views))) FROM (SELECT grain, sum(views) AS views FROM dim_rollup WHERE dim = 'asn' GROUP BY grain ORDER BY grain)")
	}
	for _, st := range m022.Statements[:copyStmts] { // a crash right after the backfills
		if err := s.Exec(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := "[('hour'," + wantCopy + "),('day'," + wantCopy + ")]"
	if got := asnViews(); got != want {
		t.Errorf("AS rows after the backfill %s, want %s", got, want)
	}
	if err := migrations.Apply(ctx, s, nil); err != nil { // the rerun, and the views
		t.Fatal(err)
	}
	if got := asnViews(); got != want {
		t.Errorf("AS rows after rerunning the migration %s, want %s", got, want)
	}
	if _, err := feed.CatchUp(ctx, s); err != nil { // what a validator's start does
		t.Fatal(err)
	}
	if got, want := asnViews(), "[('hour',"+all+"),('day',"+all+")]"; got != want {
		t.Errorf("AS rows after the feeds are redone %s, want %s", got, want)
	}
	// Per AS, the views and the engaged views add up to the site's.
	sums := func(table, col, dim string) string {
		return queryCell(t, s, "SELECT toString(groupArray((toString(grain), n))) FROM (SELECT grain, sum("+col+") AS n FROM "+table+
			" WHERE dim = '"+dim+"' AND toString(grain) != 'minute' GROUP BY grain ORDER BY grain)")
	}
	engaged := "arraySum(mapValues(engaged_hist))"
	for _, c := range []struct{ table, col string }{{"dim_rollup", "views"}, {"engagement_rollup", engaged},
		{"engagement_rollup", "visits"}, {"engagement_rollup", "bounces"}} {
		if got, want := sums(c.table, c.col, "asn"), sums(c.table, c.col, "total"); got != want || want == "[]" {
			t.Errorf("%s %s by AS %s, want the site's %s", c.table, c.col, got, want)
		}
	}
	if got := queryCell(t, s, "SELECT toString(groupArray((value, n))) FROM (SELECT value, sum("+engaged+") AS n FROM engagement_rollup "+
		"WHERE dim = 'asn' AND grain = 'day' GROUP BY value ORDER BY value)"); !strings.Contains(got, "('16509',") || !strings.Contains(got, "('3320',") {
		t.Errorf("engaged views by AS %s, want AS 16509 and 3320 among them", got)
	}
	if d := recountDiffering(t, s, time.Now()); differingAll(d) != 0 {
		t.Errorf("recount after the upgrade = %v", d)
	}
}
