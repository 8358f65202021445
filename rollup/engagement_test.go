package rollup_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// engagementRows reads engagement_rollup as storetest.DerivedRows does,
// keyed as wantEngagementRollup.
func engagementRows(t *testing.T, s store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, line := range storetest.DerivedRows(t, s)["engagement_rollup"] {
		c := strings.Split(line, "\t")
		if c[1] != engSite {
			t.Errorf("a row of another site: %q", line)
		}
		out[strings.Join([]string{c[0], c[2], c[3], c[4]}, "\t")] = strings.Join(c[5:], "\t")
	}
	return out
}

// TestEngagementRollup: engagement reports and visit deltas, stored by
// the Writer and fed as a validator's are, fill engagement_rollup with
// exactly the figures worked out by hand, and nothing of them reaches the
// rollups of views; a recount from views_raw agrees, a feed redone adds
// nothing, and a corrupted row of views_raw is reported with what differs.
func TestEngagementRollup(t *testing.T) {
	p := newPipe(t, 0, 0)
	ctx := context.Background()
	w, err := rollup.NewSink(noFeed, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range engagementVerdicts() {
		for _, v := range part {
			if err := w.Add(ctx, v.Seq, []viewcount.Verdict{v}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Drain(ctx); err != nil { // stored and fed
			t.Fatal(err)
		}
	}
	want := wantEngagementRollup()
	check := func(when string) {
		t.Helper()
		got := engagementRows(t, p.store)
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s: %s: got %q, want %q", when, k, got[k], w)
			}
		}
		for k, g := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: %s: unexpected row %q", when, k, g)
			}
		}
	}
	check("fed")

	// The rollups of views count the five valid views, and only the bot's
	// rejection: no report, accepted or not.
	for page, views := range map[string]string{"/a": "1", "/b": "2", "/c": "1", "/d": "1", "/x": "0"} {
		res, err := p.store.Query(ctx, queries.Text(queries.PageCount), store.Params{"site": engSite, "page": page})
		if err != nil || len(res.TextRows()) != 1 || res.TextRows()[0][0] != views {
			t.Errorf("page_count %s = %v %v, want %s views", page, res.TextRows(), err, views)
		}
	}
	for q, want := range map[string]string{
		"SELECT toUInt64(sum(views)) FROM dim_rollup WHERE dim = 'total' AND grain = 'day'":         "5",
		"SELECT toUInt64(sum(views)) FROM dim_rollup WHERE dim = 'page' AND grain = 'day'":          "5",
		"SELECT toUInt64(sum(views)) FROM dim_rollup WHERE dim = 'browser' AND grain = 'hour'":      "5",
		"SELECT arrayStringConcat(groupUniqArray(value)) FROM dim_rollup WHERE dim = 'reason'":      "bot_ua",
		"SELECT toUInt64(sum(views)) FROM dim_rollup WHERE dim = 'filtered_page' AND grain = 'day'": "1",
		"SELECT toUInt64(count()) FROM page_views":                                                  "5",
		"SELECT arrayStringConcat(groupUniqArray(toString(verdict))) FROM rejected_rollup":          "bot_ua",
		"SELECT toUInt64(count()) FROM views_raw WHERE kind = 1":                                    "7",
		"SELECT toUInt64(countIf(visit_set)) FROM views_raw WHERE kind = 1 AND verdict != 'valid'":  "0",
	} {
		if got := cell(t, p.store, q); got != want {
			t.Errorf("%s = %s, want %s", q, got, want)
		}
	}

	// A recount from views_raw agrees on every rollup.
	recount := func() map[string]repair.RecountResult {
		t.Helper()
		res, err := repair.Recount(ctx, p.store, time.Now(), 50)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]repair.RecountResult{}
		for _, r := range res {
			out[r.Table] = r
		}
		return out
	}
	for table, r := range recount() {
		if r.Differing != 0 {
			t.Errorf("recount of %s: %d rows differ: %+v", table, r.Differing, r.Examples)
		}
	}

	// Every feed redone, under its own token: nothing is added twice.
	ranges, err := store.Select[struct {
		First uint64 `ch:"first"`
		Last  uint64 `ch:"last"`
	}](ctx, p.store, "SELECT DISTINCT first, last FROM rollup_feed WHERE partition = 0 ORDER BY first", nil) // test-only SQL
	if err != nil || len(ranges) != 2 {
		t.Fatalf("feeds recorded: %v %v, want 2", ranges, err)
	}
	for _, r := range ranges {
		if err := feed.Copy(ctx, p.store, feed.Range{Partition: 0, First: r.First, Last: r.Last}); err != nil {
			t.Fatal(err)
		}
	}
	check("feeds redone")

	// /b's first report stored with 31 s engaged instead of 30: every row
	// of its engaged time differs from the recount, and says so.
	if err := p.store.Exec(ctx, "ALTER TABLE views_raw UPDATE d_engaged_ms = 31000 WHERE d_engaged_ms = 30000 SETTINGS mutations_sync = 2", nil); err != nil {
		t.Fatal(err) // test-only SQL
	}
	r := recount()["engagement_rollup"]
	// total, page, source, referrer, three utm_*, five client dims, asn; hour and day.
	if r.Differing != 2*13 || len(r.Examples) != 2*13 {
		t.Fatalf("recount after the corruption: %d rows differ (%d listed), want 26", r.Differing, len(r.Examples))
	}
	for _, d := range r.Examples {
		s, c := d.StoredFigures, d.RecountFigures
		if s == nil || c == nil || !slices.Equal(s.Differing(*c), []string{"engaged_ms"}) || c.EngagedMS-s.EngagedMS != 1000 {
			t.Errorf("difference %+v (stored %+v, recount %+v): want engaged_ms alone, 1000 more in the recount", d, s, c)
		}
	}
	// Listed by dim, then grain's name: AS 0's day first (the fixture's
	// events carry no AS number), then Firefox's.
	if d := r.Examples[0]; d.Grain != "day" || d.Dim != "asn" || d.Value != "0" || d.Bucket != "2026-03-10 00:00:00" ||
		d.StoredFigures.EngagedMS != 54_000 || d.StoredFigures.Visits != 2 || d.RecountFigures.EngagedMS != 55_000 {
		t.Errorf("first difference %+v %+v %+v: want AS 0's March 10, 54 s stored, 55 s recounted", d, *d.StoredFigures, *d.RecountFigures)
	}
	if d := r.Examples[2]; d.Grain != "day" || d.Dim != "browser" || d.Value != "Firefox" || d.Bucket != "2026-03-10 00:00:00" ||
		d.StoredFigures.EngagedMS != 51_000 || d.StoredFigures.Visits != 1 || d.RecountFigures.EngagedMS != 52_000 {
		t.Errorf("third difference %+v %+v %+v: want Firefox's March 10, 51 s stored, 52 s recounted", d, *d.StoredFigures, *d.RecountFigures)
	}
	for table, r := range recount() {
		if table != "engagement_rollup" && r.Differing != 0 {
			t.Errorf("recount of %s after engagement_rollup's corruption: %d rows differ", table, r.Differing)
		}
	}

	// A rebuild takes the recount (views_raw is the truth), and then
	// agrees with it again.
	if err := repair.Rebuild(ctx, p.store, repair.RebuildOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	for table, r := range recount() {
		if r.Differing != 0 {
			t.Errorf("recount of %s after the rebuild: %d rows differ: %+v", table, r.Differing, r.Examples)
		}
	}
	want["hour\ttotal\t\t2026-03-10 09:00:00"] = strings.Replace(want["hour\ttotal\t\t2026-03-10 09:00:00"], "\t51000\t", "\t52000\t", 1)
	if got := engagementRows(t, p.store)["hour\ttotal\t\t2026-03-10 09:00:00"]; got != want["hour\ttotal\t\t2026-03-10 09:00:00"] {
		t.Errorf("rebuilt total of 9:00: %q, want %q", got, want["hour\ttotal\t\t2026-03-10 09:00:00"])
	}
}

// cell is the only cell of q's answer on s (test-only SQL).
func cell(t *testing.T, s store.Store, q string) string {
	t.Helper()
	res, err := s.Query(context.Background(), q, nil)
	if err != nil || len(res.TextRows()) != 1 || len(res.TextRows()[0]) != 1 {
		t.Fatalf("%s: %v %v", q, res, err)
	}
	return res.TextRows()[0][0]
}

// TestEngagementRebuildSite: a revalidation's rebuild of one site's days
// recounts engagement_rollup from the day before the range: a report
// received after midnight (D's, on April 1) counts in its view's day
// (March 31), which a rebuild of April 1 alone would leave as it was.
func TestEngagementRebuildSite(t *testing.T) {
	p := newPipe(t, 0, 0)
	ctx := context.Background()
	w, err := rollup.NewSink(noFeed, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range engagementVerdicts() {
		for _, v := range part {
			if err := w.Add(ctx, v.Seq, []viewcount.Verdict{v}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	// What a revalidation of April 1 rewrites: D's report with 40 s of
	// visit instead of 30 (test-only SQL).
	if err := p.store.Exec(ctx, "ALTER TABLE views_raw UPDATE d_visit_ms = 40000 WHERE d_visit_ms = 30000 SETTINGS mutations_sync = 2", nil); err != nil {
		t.Fatal(err)
	}
	april := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	if err := repair.NewRebuilder(p.store, discard()).RebuildSite(ctx, engSite, april, april.AddDate(0, 0, 1), time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	want := wantEngagementRollup()
	got := engagementRows(t, p.store)
	for k, w := range want {
		if strings.Contains(k, "2026-03-31") {
			w = strings.Replace(w, "\t30000\t", "\t40000\t", 1) // visit_ms, after engaged_ms's 25000
		}
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d rows, want %d", len(got), len(want))
	}
	res, err := repair.Recount(ctx, p.store, time.Now(), 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Differing != 0 {
			t.Errorf("recount of %s after the site's rebuild: %d rows differ: %+v", r.Table, r.Differing, r.Examples)
		}
	}
	// A site's deletion finds engagement_rollup among the tables holding
	// its rows.
	if n, ok := storetest.SiteRows(t, p.store, engSite)["engagement_rollup"]; !ok || n == 0 {
		t.Errorf("a site delete finds %d rows of %s in engagement_rollup (listed: %v), want its rows", n, engSite, ok)
	}
}
