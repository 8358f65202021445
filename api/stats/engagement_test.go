package stats_test

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/api/stats"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// engagementHistory is a day of one site written out by hand, each row's
// delta as the validator's visit stage decides it (validate/judge's
// TestVisitsHistory checks the stage itself): three visits, two of them
// bounces, four counted views, three reported, one report refused.
func engagementHistory() []viewcount.Verdict {
	day := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	at := func(h, m, s int) time.Time {
		return day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second)
	}
	var rows []viewcount.Verdict
	seq := uint64(0)
	add := func(e viewcount.Event, reason viewcount.Reason, d viewcount.VisitDelta) {
		seq++
		e.Site, e.UA = "eng.example", "Mozilla/5.0"
		if e.Kind == viewcount.KindView {
			e.Source = viewcount.SourcePixel
		} else {
			e.Source = viewcount.SourceBeacon
		}
		rows = append(rows, viewcount.Verdict{Event: e, Reason: reason, Partition: 0, Seq: seq, Visit: d,
			Dims: viewcount.Dims{Browser: "Firefox", OS: "Linux", Device: "desktop", RefSource: "(direct)"}})
	}
	view := func(t time.Time, visitor uint64, page string) viewcount.Event {
		return viewcount.Event{Time: t, Page: page, Visitor: visitor, ID: page + "-" + t.Format("150405")}
	}
	report := func(t time.Time, v viewcount.Event, ms uint32, scroll uint8) viewcount.Event {
		v.Time, v.Kind, v.Engagement = t, viewcount.KindEngagement, viewcount.Engagement{EngagedMS: ms, Scroll: scroll, AgeMS: 1000}
		return v
	}
	delta := func(view, start time.Time, entry string) viewcount.VisitDelta {
		return viewcount.VisitDelta{Set: true, ViewTime: view, VisitStart: start, EntryPage: entry, EntryRefSource: "(direct)",
			EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
	}
	// Visit A: /a, 15 s engaged and 60 % down, then /b, 4 s and the whole page.
	a := view(at(10, 0, 0), 1, "/a")
	d := delta(a.Time, a.Time, "/a")
	d.Visits, d.Bounces = 1, 1
	add(a, viewcount.Valid, d)
	d = delta(a.Time, a.Time, "/a")
	d.Bounces, d.VisitMS, d.EngagedMS, d.EngagedTo, d.ScrollTo = -1, 20_000, 15_000, viewcount.EngagedBucket(15_000), viewcount.ScrollBucket(60)
	add(report(at(10, 0, 20), a, 15_000, 60), viewcount.Valid, d)
	b := view(at(10, 5, 0), 1, "/b")
	d = delta(b.Time, a.Time, "/a")
	d.PrevPage, d.VisitMS = "/a", 280_000
	add(b, viewcount.Valid, d)
	d = delta(b.Time, a.Time, "/a")
	d.VisitMS, d.EngagedMS, d.EngagedTo, d.ScrollTo = 30_000, 4_000, viewcount.EngagedBucket(4_000), viewcount.ScrollBucket(100)
	add(report(at(10, 5, 30), b, 4_000, 100), viewcount.Valid, d)
	// Visit B: /a, 3 s and a fifth of the page: a bounce.
	a2 := view(at(11, 0, 0), 2, "/a")
	d = delta(a2.Time, a2.Time, "/a")
	d.Visits, d.Bounces = 1, 1
	add(a2, viewcount.Valid, d)
	d = delta(a2.Time, a2.Time, "/a")
	d.VisitMS, d.EngagedMS, d.EngagedTo, d.ScrollTo = 5_000, 3_000, viewcount.EngagedBucket(3_000), viewcount.ScrollBucket(20)
	add(report(at(11, 0, 5), a2, 3_000, 20), viewcount.Valid, d)
	// Visit C: /c by the pixel, never reported.
	c := view(at(12, 0, 0), 3, "/c")
	d = delta(c.Time, c.Time, "/c")
	d.Visits, d.Bounces = 1, 1
	add(c, viewcount.Valid, d)
	// A bot's view and its report: neither counts.
	bot := view(at(13, 0, 0), 4, "/a")
	add(bot, viewcount.BotUA, viewcount.VisitDelta{})
	add(report(at(13, 0, 9), bot, 9_000, 50), viewcount.EngagementOrphan, viewcount.VisitDelta{})
	return rows
}

// newEngagementFixture serves engagementHistory; opts adjust the API's
// configuration.
func newEngagementFixture(t *testing.T, opts ...func(*stats.Config)) *fixture {
	t.Helper()
	st := storetest.Migrated(t)
	storetest.Insert(t, st, "engagement", engagementHistory())
	f := &fixture{t: t, store: st, now: time.Date(2026, 11, 12, 0, 0, 0, 0, time.UTC)}
	cfg := stats.Config{
		Store:    st,
		Auth:     func(c *gin.Context) (string, bool) { return c.Param("site"), true },
		Zones:    stats.ZoneNames(func(context.Context, string) (string, error) { return "", nil }, nil),
		NormPage: func(s string) (string, error) { return ingest.NormalisePage(s, false, 0) },
		Now:      func() time.Time { return f.now },
	}
	for _, o := range opts {
		o(&cfg)
	}
	api, err := stats.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.TestMode)
	e := gin.New()
	api.Routes(e)
	f.srv = e
	return f
}

type engagementSummary struct {
	Views, Filtered uint64
	Visits          uint64
	EngagedViews    uint64                  `json:"engaged_views"`
	Reported        uint64                  `json:"reported_views"`
	BounceRate      *float64                `json:"bounce_rate"`
	VisitDuration   *float64                `json:"visit_duration"`
	TimeOnPage      *float64                `json:"time_on_page"`
	ScrollDepth     *float64                `json:"scroll_depth"`
	EngagedAfter    float64                 `json:"engaged_after"`
	Previous        struct{ Visits uint64 } `json:"previous_engagement"`
}

func near(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }

// TestEngagementSummary: the summary's visit and engagement figures over
// the hand-written day, exactly; the page's are its views' and the visits
// entering there; views count only views.
func TestEngagementSummary(t *testing.T) {
	f := newEngagementFixture(t)
	var got engagementSummary
	f.getJSON("/v1/sites/eng.example/stats/summary?from=2026-11-10&to=2026-11-10", &got)
	// Medians over 15, 4 and 3 s: the middle view is in [4 s, 5 s), half
	// way in; scroll over 60, 100 and 20 %: half way into [60, 65).
	if got.Views != 4 || got.Filtered != 1 || got.Visits != 3 || got.EngagedViews != 1 || got.Reported != 3 ||
		!near(got.BounceRate, 2.0/3) || !near(got.VisitDuration, 335.0/3) || !near(got.TimeOnPage, 4.5) || !near(got.ScrollDepth, 62.5) ||
		got.EngagedAfter != 10 || got.Previous.Visits != 0 {
		b, _ := json.Marshal(got)
		t.Errorf("site summary: %s", b)
	}
	got = engagementSummary{}
	f.getJSON("/v1/sites/eng.example/stats/summary?from=2026-11-10&to=2026-11-10&page=/a", &got)
	// /a: 15 and 3 s (median half way into [3 s, 4 s) at the first view:
	// 4 s), 60 and 20 % (25 %); the two visits that entered on it.
	if got.Views != 2 || got.Visits != 2 || got.EngagedViews != 1 || got.Reported != 2 ||
		!near(got.BounceRate, 0.5) || !near(got.VisitDuration, 167.5) || !near(got.TimeOnPage, 4) || !near(got.ScrollDepth, 25) {
		b, _ := json.Marshal(got)
		t.Errorf("page summary: %s", b)
	}
	var empty struct {
		Visits     uint64
		BounceRate *float64 `json:"bounce_rate"`
		TimeOnPage *float64 `json:"time_on_page"`
	}
	f.getJSON("/v1/sites/eng.example/stats/summary?from=2026-11-11&to=2026-11-11", &empty)
	if empty.Visits != 0 || empty.BounceRate != nil || empty.TimeOnPage != nil {
		t.Errorf("a day without visits: %+v, want 0 and nulls", empty)
	}
}

// TestEngagementBreakdowns: entry and exit pages, and the engagement
// columns of the page ranking, exactly; CSV carries them.
func TestEngagementBreakdowns(t *testing.T) {
	f := newEngagementFixture(t)
	var got struct {
		Rows []struct {
			Value         string
			Views         uint64
			Visits        *uint64  `json:"visits"`
			Exits         *uint64  `json:"exits"`
			EngagedViews  *uint64  `json:"engaged_views"`
			BounceRate    *float64 `json:"bounce_rate"`
			VisitDuration *float64 `json:"visit_duration"`
			TimeOnPage    *float64 `json:"time_on_page"`
			ScrollDepth   *float64 `json:"scroll_depth"`
		}
		TotalValues uint64 `json:"total_values"`
	}
	const q = "&from=2026-11-10&to=2026-11-10"
	f.getJSON("/v1/sites/eng.example/stats/breakdown?by=entry_page"+q, &got)
	if len(got.Rows) != 2 || got.TotalValues != 2 ||
		got.Rows[0].Value != "/a" || *got.Rows[0].Visits != 2 || !near(got.Rows[0].BounceRate, 0.5) || !near(got.Rows[0].VisitDuration, 167.5) ||
		got.Rows[1].Value != "/c" || *got.Rows[1].Visits != 1 || !near(got.Rows[1].BounceRate, 1) || !near(got.Rows[1].VisitDuration, 0) {
		b, _ := json.Marshal(got)
		t.Errorf("entry pages: %s", b)
	}
	got.Rows = nil
	f.getJSON("/v1/sites/eng.example/stats/breakdown?by=exit_page"+q, &got)
	if len(got.Rows) != 3 || got.Rows[0].Value != "/a" || *got.Rows[0].Exits != 1 || got.Rows[1].Value != "/b" || *got.Rows[1].Exits != 1 ||
		got.Rows[2].Value != "/c" || *got.Rows[2].Exits != 1 {
		b, _ := json.Marshal(got)
		t.Errorf("exit pages: %s", b)
	}
	got.Rows = nil
	f.getJSON("/v1/sites/eng.example/stats/breakdown?by=page"+q, &got)
	if len(got.Rows) != 3 || got.Rows[0].Value != "/a" || got.Rows[0].Views != 2 || !near(got.Rows[0].TimeOnPage, 4) || !near(got.Rows[0].ScrollDepth, 25) ||
		*got.Rows[0].EngagedViews != 1 ||
		got.Rows[1].Value != "/b" || !near(got.Rows[1].TimeOnPage, 4.5) || !near(got.Rows[1].ScrollDepth, 100) || *got.Rows[1].EngagedViews != 0 ||
		got.Rows[2].Value != "/c" || got.Rows[2].TimeOnPage != nil || got.Rows[2].EngagedViews != nil {
		b, _ := json.Marshal(got)
		t.Errorf("pages: %s", b)
	}
	if code, body := f.get("/v1/sites/eng.example/stats/breakdown?by=entry_page&page=/a" + q); code != 400 || !strings.Contains(body, "page:") {
		t.Errorf("entry pages of one page: %d %s, want 400 naming page", code, body)
	}
	req := httptest.NewRequest(http.MethodGet, "/v1/sites/eng.example/stats/breakdown?by=entry_page&format=csv"+q, nil)
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, req)
	body, _ := io.ReadAll(w.Body)
	if want := "entry_page,visits,bounce_rate,visit_duration\n/a,2,0.5,167.5\n/c,1,1,0\n"; string(body) != want {
		t.Errorf("CSV:\n%s\nwant\n%s", body, want)
	}
}

// TestEntryPagesOneRead: the entry page ranking reads its pages' bounces
// and visit time in the pass that ranks them; on a generated history with
// visits, every row's figures equal those of the read of the ranked
// pages' figures it replaced (stats_engagement_values), over a range with
// hour edges.
func TestEntryPagesOneRead(t *testing.T) {
	hc := storetest.HistoryConfig{Events: 20_000, Days: 4, End: time.Date(2026, 11, 20, 10, 30, 0, 0, time.UTC),
		Pages: 40, Visitors: 500, Seed: 5, Batch: 5_000, Visits: true}
	f := newFixtureOf(t, hc, map[string]string{"history.example": ""})
	from, to := time.Date(2026, 11, 16, 15, 0, 0, 0, time.UTC), time.Date(2026, 11, 19, 7, 0, 0, 0, time.UTC)
	var got struct {
		Rows []struct {
			Value         string
			Visits        *uint64  `json:"visits"`
			BounceRate    *float64 `json:"bounce_rate"`
			VisitDuration *float64 `json:"visit_duration"`
		}
	}
	f.getJSON("/v1/sites/history.example/stats/breakdown?by=entry_page&limit=1000&from="+url(from)+"&to="+url(to), &got)
	if len(got.Rows) < 10 {
		t.Fatalf("%d entry pages, want the history's", len(got.Rows))
	}
	values := make([]string, len(got.Rows))
	for i, r := range got.Rows {
		values[i] = r.Value
	}
	// The replaced read, as the API made it: whole UTC days from day rows,
	// the edges from hours.
	p := store.Params{"site": "history.example", "dim": "entry_page", "values": store.ArrayParam(values),
		"from": "2026-11-16 15:00:00", "to": "2026-11-19 07:00:00", "dfrom": "2026-11-17 00:00:00", "dto": "2026-11-19 00:00:00"}
	rows, err := store.Select[queries.StatsEngagementValuesRow](t.Context(), f.store, queries.Text("stats_engagement_values"), p)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]map[string]int64{}
	for _, r := range rows {
		if sums[r.Value] == nil {
			sums[r.Value] = map[string]int64{}
		}
		sums[r.Value][r.Part] += r.N
	}
	for _, r := range got.Rows {
		s := sums[r.Value]
		visits := s["visits"]
		if visits <= 0 || r.Visits == nil || int64(*r.Visits) != visits ||
			!near(r.BounceRate, float64(max(s["bounces"], 0))/float64(visits)) ||
			!near(r.VisitDuration, float64(max(s["visit_ms"], 0))/float64(visits)/1000) {
			t.Errorf("%s: visits %v bounce rate %v duration %v, want %d, %v", r.Value, r.Visits, r.BounceRate, r.VisitDuration, visits, s)
		}
	}
}
