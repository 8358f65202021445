package api

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// engagedHistory writes views and their accepted reports with the deltas
// the visit stage gives them (validate/judge's TestVisitsHistory checks
// the stage): for each view its engaged time in ms, -1 for a view that
// has not reported.
func (f *fixture) engagedHistory(t *testing.T, site string, views []engagedView) {
	t.Helper()
	var rows []viewcount.Verdict
	for i, v := range views {
		f.seq++
		ev := viewcount.Event{Time: v.at, Site: site, Page: v.page, UA: "Mozilla/5.0", Visitor: uint64(i + 1),
			ID: v.page + "-" + v.at.Format("150405"), Source: viewcount.SourceBeacon}
		d := viewcount.VisitDelta{Set: true, ViewTime: v.at, VisitStart: v.at, EntryPage: v.page, EntryRefSource: "(direct)",
			Visits: 1, Bounces: 1, EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
		rows = append(rows, viewcount.Verdict{Event: ev, Reason: viewcount.Valid, Seq: f.seq, Visit: d})
		if v.engagedMS < 0 {
			continue
		}
		f.seq++
		rep := ev
		rep.Kind, rep.Time = viewcount.KindEngagement, v.at.Add(time.Duration(v.engagedMS+1000)*time.Millisecond)
		rep.Engagement = viewcount.Engagement{EngagedMS: uint32(v.engagedMS), AgeMS: uint32(v.engagedMS + 1000)}
		d = viewcount.VisitDelta{Set: true, ViewTime: v.at, VisitStart: v.at, EntryPage: v.page, EntryRefSource: "(direct)",
			VisitMS: int32(v.engagedMS + 1000), EngagedMS: int32(v.engagedMS),
			EngagedFrom: -1, EngagedTo: viewcount.EngagedBucket(uint32(v.engagedMS)), ScrollFrom: -1, ScrollTo: 0}
		if v.engagedMS >= int(viewcount.BounceEngaged.Milliseconds()) {
			d.Bounces = -1
		}
		rows = append(rows, viewcount.Verdict{Event: rep, Reason: viewcount.Valid, Seq: f.seq, Visit: d})
	}
	if err := storetest.InsertFed(context.Background(), f.store, "", rows); err != nil {
		t.Fatal(err)
	}
}

type engagedView struct {
	at        time.Time
	page      string
	engagedMS int
}

// TestCountsEngaged: a site counting engaged views (docs/engagement.md,
// "Counting engaged views publicly") shows, on /count, /counts and the
// badge alike, its views engaged for at least engaged_after, and pending
// the views of the last engagement horizon not engaged yet; exact figures
// on a written history. Back to counting views, the same endpoints show
// every counted view.
func TestCountsEngaged(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const site = "eng.example"
	if _, _, err := f.sites.Add(ctx, site); err != nil {
		t.Fatal(err)
	}
	f.snap.CountBy(f.sites.Counting)
	now := f.clock.t // 2026-11-29 12:00 UTC
	yesterday := now.Add(-26 * time.Hour)
	f.engagedHistory(t, site, []engagedView{
		{yesterday, "/a", 15_000},                  // engaged
		{yesterday.Add(time.Minute), "/a", 4_000},  // reported, under 10 s
		{yesterday.Add(2 * time.Minute), "/a", -1}, // never reported: closed long ago
		{now.Add(-40 * time.Minute), "/a", 12_000}, // engaged, within the horizon
		{now.Add(-10 * time.Minute), "/a", -1},     // open: its report may come
		{now.Add(-30 * time.Minute), "/b", 30_000}, // engaged
		{now.Add(-20 * time.Minute), "/b", 9_999},  // just under engaged_after
		{now.Add(-90 * time.Minute), "/c", -1},     // past the horizon, never engaged
	})
	engaged := viewcount.CountEngaged
	if _, err := f.sites.SetEngagement(ctx, site, 10, &engaged); err != nil {
		t.Fatal(err)
	}

	type count struct{ Views, Uniques, Pending uint64 }
	one := func(page string) count {
		t.Helper()
		w := f.get(t, "/v1/sites/"+site+"/count?page="+page)
		var c count
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &c) != nil {
			t.Fatalf("count %s: %d %s", page, w.Code, w.Body)
		}
		return c
	}
	many := func(pages ...string) map[string]count {
		t.Helper()
		w := f.get(t, "/v1/sites/"+site+"/counts?page="+strings.Join(pages, "&page="))
		var got struct {
			Counts []struct {
				Page string
				count
			}
		}
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &got) != nil {
			t.Fatalf("counts: %d %s", w.Code, w.Body)
		}
		m := map[string]count{}
		for _, c := range got.Counts {
			m[c.Page] = c.count
		}
		return m
	}
	badge := func(page string) string {
		t.Helper()
		w := f.get(t, "/badge/"+site+".svg?page="+page)
		if w.Code != 200 {
			t.Fatalf("badge %s: %d", page, w.Code)
		}
		return w.Body.String()
	}
	check := func(mode string, want map[string]count) {
		t.Helper()
		pages := []string{"/a", "/b", "/c"}
		batch := many(pages...)
		for _, p := range pages {
			if got := one(p); got != want[p] {
				t.Errorf("%s: /count %s = %+v, want %+v", mode, p, got, want[p])
			}
			if got := batch[p]; got != want[p] {
				t.Errorf("%s: /counts %s = %+v, want %+v", mode, p, got, want[p])
			}
			if views := want[p].Views; !strings.Contains(badge(p), ">"+shortCount(views)+"</text>") {
				t.Errorf("%s: badge of %s lacks %d: %s", mode, p, views, badge(p))
			}
		}
	}
	// /a: the 15 s and 12 s views; pending the 10-minute-old view, the only
	// view of the horizon's hours (11:00 on) not engaged. /b: the 30 s
	// view, pending its 9.999 s view (reported, not engaged: a later report
	// may still add time). /c: none.
	check("engaged", map[string]count{
		"/a": {Views: 2, Uniques: 2, Pending: 1},
		"/b": {Views: 1, Uniques: 1, Pending: 1},
		"/c": {Views: 0, Uniques: 0, Pending: 0},
	})

	// engaged_after 15 s: only the 15 s and 30 s views; /a's 12 s view is
	// of the horizon and not engaged now, so open too.
	if _, err := f.sites.SetEngagement(ctx, site, 15, nil); err != nil {
		t.Fatal(err)
	}
	f.clock.t = f.clock.t.Add(time.Minute) // past the snapshot's lag: read again
	check("engaged after 15 s", map[string]count{
		"/a": {Views: 1, Uniques: 1, Pending: 2},
		"/b": {Views: 1, Uniques: 1, Pending: 1},
		"/c": {Views: 0, Uniques: 0, Pending: 0},
	})

	views := viewcount.CountViews
	if _, err := f.sites.SetEngagement(ctx, site, 0, &views); err != nil {
		t.Fatal(err)
	}
	f.clock.t = f.clock.t.Add(time.Minute)
	check("views", map[string]count{
		"/a": {Views: 5, Uniques: 5},
		"/b": {Views: 2, Uniques: 2},
		"/c": {Views: 1, Uniques: 1},
	})
}
