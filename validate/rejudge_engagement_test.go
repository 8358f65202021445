package validate

import (
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// A revalidation reading views_raw gets an engagement report back as
// ingest published it: its kind and the tracker's engaged time, scroll
// depth and age (migration 021). The visit stage's delta is not read: a
// revalidation computes it anew.
func TestRawEventReadsEngagement(t *testing.T) {
	st := storetest.Migrated(t)
	at := time.Date(2026, 3, 10, 9, 50, 8, 0, time.UTC)
	report := viewcount.Event{Time: at, Site: "a.example", Page: "/a", UA: "Mozilla/5.0", ID: "v1", Visitor: 7,
		Source: viewcount.SourceBeacon, Kind: viewcount.KindEngagement,
		Engagement: viewcount.Engagement{EngagedMS: 6000, Scroll: 40, AgeMS: 8000}}
	view := report
	view.Kind, view.Engagement, view.Time = viewcount.KindView, viewcount.Engagement{}, at.Add(-8*time.Second)
	storetest.Insert(t, st, "", []viewcount.Verdict{
		{Event: view, Reason: viewcount.Valid, Seq: 1},
		{Event: report, Reason: viewcount.Valid, Seq: 2,
			Visit: viewcount.VisitDelta{Set: true, ViewTime: view.Time, VisitStart: view.Time, EngagedMS: 6000, EngagedTo: 6, ScrollFrom: -1, EngagedFrom: -1, ScrollTo: 8}},
	})
	res, err := st.Query(t.Context(), queries.Text(queries.RevalidateEvents), store.Params{"partition": "0",
		"from": strconv.FormatInt(at.Add(-time.Minute).UnixMilli(), 10), "to": strconv.FormatInt(at.UnixMilli(), 10), "after": "0", "limit": "10"})
	if err != nil {
		t.Fatal(err)
	}
	var got []viewcount.Event
	for res.Next() {
		got = append(got, rawEvent(res))
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Kind != viewcount.KindView || got[0].Engagement != (viewcount.Engagement{}) ||
		got[1].Kind != viewcount.KindEngagement || got[1].Engagement != report.Engagement || got[1].ID != "v1" || !got[1].Time.Equal(at) {
		t.Errorf("read back %+v, want the view and the report as published", got)
	}
}
