package repair_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// The AS-number rows of dim_rollup and engagement_rollup (migration 022)
// are recounted like every other dimension's: a sound store recounts
// clean, a network's rows lost from both tables are found (dim 'asn', its
// value), and a rebuild writes them back.
func TestRecountCoversASN(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var rows []viewcount.Verdict
	for i := range 300 {
		tm := at.Add(time.Duration(i) * 13 * time.Second)
		v := viewcount.Verdict{Event: viewcount.Event{Time: tm, Site: "a.example", Page: "/p", UA: "Mozilla/5.0", ID: "v" + strconv.Itoa(i),
			Visitor: uint64(i), ASN: []uint32{3320, 12345, 0}[i%3], Source: viewcount.SourceBeacon},
			Dims: viewcount.Dims{Browser: "Firefox", Device: "desktop"}, Reason: viewcount.Valid, Seq: uint64(len(rows) + 1),
			Visit: viewcount.VisitDelta{Set: true, ViewTime: tm, VisitStart: tm, EntryPage: "/p", Visits: 1, Bounces: 1,
				EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}}
		if i%7 == 6 {
			v.Reason, v.Visit = viewcount.BotUA, viewcount.VisitDelta{}
		}
		rows = append(rows, v)
		if i%2 == 0 && v.Reason == viewcount.Valid {
			r := v
			r.Kind, r.ID, r.Time, r.Seq = viewcount.KindEngagement, "r"+strconv.Itoa(i), tm.Add(12*time.Second), uint64(len(rows)+1)
			r.Engagement = viewcount.Engagement{EngagedMS: 11_000, Scroll: 80, AgeMS: 12_000}
			r.Visit = viewcount.VisitDelta{Set: true, ViewTime: tm, VisitStart: tm, EntryPage: "/p", EngagedMS: 11_000, VisitMS: 12_000,
				Bounces: -1, EngagedFrom: -1, EngagedTo: viewcount.EngagedBucket(11_000), ScrollFrom: -1, ScrollTo: viewcount.ScrollBucket(80)}
			rows = append(rows, r)
		}
	}
	if err := storetest.InsertFed(ctx, s, "asn", rows); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if got := queryCell(t, s, "SELECT toString(groupArray((value, n))) FROM (SELECT value, sum(views) AS n FROM dim_rollup WHERE dim = 'asn' AND grain = 'day' GROUP BY value ORDER BY value)"); got != "[('0',86),('12345',86),('3320',86)]" {
		t.Fatalf("valid views by AS %s, want 86 of each network", got)
	}
	if d := recountDiffering(t, s, now); differingAll(d) != 0 {
		t.Fatalf("recount of a sound store = %v", d)
	}
	for _, table := range []string{"dim_rollup", "engagement_rollup"} {
		if err := s.Exec(ctx, "ALTER TABLE "+table+" DELETE WHERE dim = 'asn' AND value = '12345' SETTINGS mutations_sync = 2", nil); err != nil {
			t.Fatal(err)
		}
	}
	res, err := repair.Recount(ctx, s, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		var want uint64
		if r.Table == "dim_rollup" || r.Table == "engagement_rollup" {
			want = 3 // the network's two hours (9:00, 10:00) and its day
		}
		if r.Differing != want {
			t.Errorf("%s: %d rows differ, want %d: %+v", r.Table, r.Differing, want, r.Examples)
		}
		for _, e := range r.Examples {
			if e.Dim != "asn" || e.Value != "12345" {
				t.Errorf("%s: differing row %+v, want AS 12345's", r.Table, e)
			}
		}
	}
	if err := repair.Rebuild(ctx, s, repair.RebuildOptions{Now: now}, nil); err != nil {
		t.Fatal(err)
	}
	if d := recountDiffering(t, s, now); differingAll(d) != 0 {
		t.Errorf("recount after the rebuild = %v", d)
	}
}
