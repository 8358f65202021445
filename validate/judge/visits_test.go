package judge

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/noscan"
)

// visitRun feeds events through the rules and the visit stage the way
// validate's judgeEvents does with settling off: views are judged, reports
// are not, and every verdict then goes through Visit in order.
type visitRun struct {
	r *Rules
}

func newVisitRun(t testing.TB, cfg Config) *visitRun {
	cfg.SettleWindow = -1
	return &visitRun{r: newTestRules(t, cfg)}
}

func (run *visitRun) feed(e viewcount.Event) viewcount.Verdict {
	v := viewcount.Verdict{Event: e}
	if e.Kind == viewcount.KindView {
		v.Reason = run.r.Judge(&e)
	}
	run.r.Visit(&v)
	return v
}

var visitT0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

func at(d string) time.Time {
	dur, err := time.ParseDuration(d)
	if err != nil {
		panic(err)
	}
	return visitT0.Add(dur)
}

func pageView(t time.Time, visitor uint64, page, id string) viewcount.Event {
	return viewcount.Event{Time: t, Site: "example.com", Page: page, UA: settleUA, Visitor: visitor,
		Network: visitor << 8, ID: id, Source: viewcount.SourcePixel}
}

func report(t time.Time, visitor uint64, page, id string, engagedMS uint32, scroll uint8) viewcount.Event {
	e := pageView(t, visitor, page, id)
	e.Source, e.Kind = viewcount.SourceBeacon, viewcount.KindEngagement
	e.Engagement = viewcount.Engagement{EngagedMS: engagedMS, Scroll: scroll, AgeMS: 1000}
	return e
}

// TestVisitsHistory: a scripted history with every row's delta written out.
func TestVisitsHistory(t *testing.T) {
	run := newVisitRun(t, Config{})
	type want struct {
		reason viewcount.Reason
		d      viewcount.VisitDelta
	}
	none := viewcount.VisitDelta{}
	visit := func(view, start time.Time, entry string) viewcount.VisitDelta {
		return viewcount.VisitDelta{Set: true, ViewTime: view, VisitStart: start, EntryPage: entry,
			EntryRefSource: "(direct)", EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
	}
	with := func(d viewcount.VisitDelta, f func(*viewcount.VisitDelta)) viewcount.VisitDelta { f(&d); return d }
	day2 := visitT0.Truncate(24 * time.Hour).Add(24 * time.Hour)
	steps := []struct {
		e viewcount.Event
		want
	}{
		// Visitor 1 opens a visit on /a.
		{pageView(at("0s"), 1, "/a", "a1"), want{viewcount.Valid, with(visit(at("0s"), at("0s"), "/a"), func(d *viewcount.VisitDelta) {
			d.Visits, d.Bounces = 1, 1
		})}},
		// 11 s engaged, half the page: no longer a bounce.
		{report(at("12s"), 1, "/a", "a1", 11_000, 50), want{viewcount.Valid, with(visit(at("0s"), at("0s"), "/a"), func(d *viewcount.VisitDelta) {
			d.Bounces, d.VisitMS, d.EngagedMS = -1, 12_000, 11_000
			d.EngagedTo, d.ScrollTo = viewcount.EngagedBucket(11_000), 10
		})}},
		// The same report again adds nothing.
		{report(at("13s"), 1, "/a", "a1", 11_000, 50), want{viewcount.EngagementRepeat, none}},
		// More time, less scroll (the reader scrolled back up): the time
		// counts, the depth stays the deepest.
		{report(at("20s"), 1, "/a", "a1", 15_000, 40), want{viewcount.Valid, with(visit(at("0s"), at("0s"), "/a"), func(d *viewcount.VisitDelta) {
			d.VisitMS, d.EngagedMS = 8_000, 4_000
			d.EngagedFrom, d.EngagedTo = viewcount.EngagedBucket(11_000), viewcount.EngagedBucket(15_000)
			d.ScrollFrom, d.ScrollTo = 10, 10
		})}},
		// 19 min 40 s after the last report: the same visit; /a's exit moves to /b.
		{pageView(at("20m"), 1, "/b", "b1"), want{viewcount.Valid, with(visit(at("20m"), at("0s"), "/a"), func(d *viewcount.VisitDelta) {
			d.PrevPage, d.VisitMS = "/a", 20*60_000-20_000
		})}},
		// 31 minutes without activity: a new visit.
		{pageView(at("51m"), 1, "/c", "c1"), want{viewcount.Valid, with(visit(at("51m"), at("51m"), "/c"), func(d *viewcount.VisitDelta) {
			d.Visits, d.Bounces = 1, 1
		})}},
		// 9 s claimed 5 s after the view (3 s of slack).
		{report(at("51m5s"), 1, "/c", "c1", 9_000, 0), want{viewcount.EngagementOverclaim, none}},
		// Not the view's page, not its visitor, no such view.
		{report(at("51m6s"), 1, "/x", "c1", 1_000, 0), want{viewcount.EngagementOrphan, none}},
		{report(at("51m6s"), 2, "/c", "c1", 1_000, 0), want{viewcount.EngagementOrphan, none}},
		{report(at("51m6s"), 1, "/c", "nope", 1_000, 0), want{viewcount.EngagementOrphan, none}},
		// A report of zero seconds is a report: the view is in bucket 0
		// (a background tab closed unseen), still a bounce.
		{report(at("51m7s"), 1, "/c", "c1", 0, 0), want{viewcount.Valid, with(visit(at("51m"), at("51m"), "/c"), func(d *viewcount.VisitDelta) {
			d.VisitMS, d.EngagedTo, d.ScrollTo = 7_000, 0, 0
		})}},
		// A bot's view is not counted, so its report is an orphan.
		{func() viewcount.Event { e := pageView(at("52m"), 3, "/z", "z1"); e.UA = uaGooglebot; return e }(), want{viewcount.BotUA, none}},
		{func() viewcount.Event {
			e := report(at("52m1s"), 3, "/z", "z1", 1_000, 0)
			e.UA = uaGooglebot
			return e
		}(), want{viewcount.EngagementOrphan, none}},
		// A report more than the horizon after its view, or claiming so.
		{report(at("1h20m1s"), 1, "/b", "b1", 60_000, 100), want{viewcount.EngagementLate, none}},
		{func() viewcount.Event {
			e := report(at("1h20m2s"), 1, "/c", "c1", 1_000, 0)
			e.Engagement.AgeMS = uint32(time.Hour/time.Millisecond) + 1
			return e
		}(), want{viewcount.EngagementLate, none}},
		// Midnight: the same visitor id (a test can keep it) before and
		// after 00:00 UTC makes two visits; a report after midnight adds
		// to its view's visit and day.
		{pageView(day2.Add(-10*time.Minute), 4, "/m", "m1"), want{viewcount.Valid, with(visit(day2.Add(-10*time.Minute), day2.Add(-10*time.Minute), "/m"), func(d *viewcount.VisitDelta) {
			d.Visits, d.Bounces = 1, 1
		})}},
		{pageView(day2.Add(5*time.Minute), 4, "/n", "n1"), want{viewcount.Valid, with(visit(day2.Add(5*time.Minute), day2.Add(5*time.Minute), "/n"), func(d *viewcount.VisitDelta) {
			d.Visits, d.Bounces = 1, 1
		})}},
		{report(day2.Add(6*time.Minute), 4, "/m", "m1", 30_000, 100), want{viewcount.Valid, with(visit(day2.Add(-10*time.Minute), day2.Add(-10*time.Minute), "/m"), func(d *viewcount.VisitDelta) {
			d.Bounces, d.VisitMS, d.EngagedMS = -1, 16*60_000, 30_000
			d.EngagedTo, d.ScrollTo = viewcount.EngagedBucket(30_000), viewcount.ScrollBuckets-1
		})}},
	}
	for i, s := range steps {
		got := run.feed(s.e)
		if got.Reason != s.reason || got.Visit != s.d {
			t.Errorf("step %d (%s %s %s at %s): got %s %+v\nwant %s %+v", i, s.e.Kind, s.e.Page, s.e.ID,
				s.e.Time.Format(time.TimeOnly), got.Reason, got.Visit, s.reason, s.d)
		}
	}
}

// TestVisitsEntrySource: visit figures are broken down by the entry view's
// source; the visit's later views come from the site itself.
func TestVisitsEntrySource(t *testing.T) {
	run := newVisitRun(t, Config{})
	e := pageView(at("0s"), 1, "/a", "a1")
	e.Referrer = "https://www.google.com/search"
	e.UTM = viewcount.UTM{Source: "news", Medium: "email"}
	first := run.feed(e)
	e = pageView(at("1m"), 1, "/b", "b1")
	e.Referrer = "https://example.com/a"
	second := run.feed(e)
	for _, v := range []viewcount.Verdict{first, second} {
		if v.Visit.EntryRefSource != "Google" || v.Visit.EntryRefHost != "google.com" || v.Visit.EntryUTM.Medium != "email" {
			t.Errorf("%s: entry %q %q %+v, want Google google.com email", v.Page, v.Visit.EntryRefSource, v.Visit.EntryRefHost, v.Visit.EntryUTM)
		}
	}
}

// TestVisitsMatchBatch: on random histories, the deltas the stage writes
// add up to what a batch computation over the final verdicts gives, per
// site: visits, bounces, total duration, entries and exits per page,
// engaged time per view and the histograms. This is the property the
// rollups rely on, since they only ever sum the deltas.
func TestVisitsMatchBatch(t *testing.T) {
	run := newVisitRun(t, Config{})
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		// Half the histories run into tiny caps (NewRules per seed is slow).
		run.r.Reset()
		run.r.visits.maxViews, run.r.visits.maxVisits = run.r.cfg.MaxOpenViews, run.r.cfg.MaxVisits
		if rng.IntN(2) == 0 {
			run.r.visits.maxViews, run.r.visits.maxVisits = 1+rng.IntN(64), 1+rng.IntN(64)
		}
		var out []viewcount.Verdict
		type sent struct {
			e    viewcount.Event
			last uint32
		}
		var views []sent
		clock := visitT0.Add(time.Duration(rng.IntN(24)) * time.Hour)
		for i := 0; i < 400; i++ {
			clock = clock.Add(time.Duration(rng.ExpFloat64() * float64(2*time.Minute)))
			if len(views) == 0 || rng.IntN(3) == 0 {
				e := pageView(clock, uint64(1+rng.IntN(6)), fmt.Sprintf("/p%d", rng.IntN(5)), fmt.Sprintf("v%d-%d", seed, i))
				views = append(views, sent{e: e})
				out = append(out, run.feed(e))
				continue
			}
			s := &views[len(views)-1-rng.IntN(min(len(views), 8))]
			elapsed := clock.Sub(s.e.Time).Milliseconds()
			engaged := s.last
			switch rng.IntN(4) {
			case 0: // the same again
			case 1: // more than possible
				engaged = uint32(elapsed + 5000)
			default:
				engaged = uint32(rng.Int64N(elapsed + 1))
			}
			s.last = max(s.last, engaged)
			out = append(out, run.feed(report(clock, s.e.Visitor, s.e.Page, s.e.ID, engaged, uint8(rng.IntN(101)))))
		}
		checkBatch(t, seed, out)
		checkRefs(t, seed, &run.r.visits)
	}
}

// checkBatch recomputes visits from the final verdicts (counted views and
// accepted reports) and compares them with the sums of the deltas.
func checkBatch(t *testing.T, seed uint64, out []viewcount.Verdict) {
	t.Helper()
	type agg struct {
		visits, bounces, visitMS int64
		entries, exits           map[string]int64
		engaged                  int64
		hist                     map[int8]int64
		scroll                   map[int8]int64
	}
	newAgg := func() *agg {
		return &agg{entries: map[string]int64{}, exits: map[string]int64{}, hist: map[int8]int64{}, scroll: map[int8]int64{}}
	}
	sum, batch := newAgg(), newAgg()
	for _, v := range out {
		d := v.Visit
		if !d.Set {
			continue
		}
		sum.visits += int64(d.Visits)
		sum.bounces += int64(d.Bounces)
		sum.visitMS += int64(d.VisitMS)
		sum.engaged += int64(d.EngagedMS)
		if d.Visits == 1 {
			sum.entries[d.EntryPage]++
		}
		if v.Kind == viewcount.KindView {
			sum.exits[v.Page]++
			if d.PrevPage != "" {
				sum.exits[d.PrevPage]--
			}
		}
		for _, h := range []struct {
			m        map[int8]int64
			from, to int8
		}{{sum.hist, d.EngagedFrom, d.EngagedTo}, {sum.scroll, d.ScrollFrom, d.ScrollTo}} {
			if h.from >= 0 {
				h.m[h.from]--
			}
			if h.to >= 0 {
				h.m[h.to]++
			}
		}
	}
	// The batch: visits by VisitStart (each verdict names its visit's
	// start, which identifies it together with the visitor).
	type visitID struct {
		visitor uint64
		start   time.Time
	}
	type vis struct {
		start, last time.Time
		views       int
		lastPage    string
		engaged     map[string]uint32 // by view id: the most accepted
	}
	visits := map[visitID]*vis{}
	var order []visitID
	viewEngaged := map[string]uint32{}
	viewScroll := map[string]uint8{}
	reported := map[string]bool{}
	for _, v := range out {
		if !v.Visit.Set {
			continue
		}
		id := visitID{v.Visitor, v.Visit.VisitStart}
		x := visits[id]
		if x == nil {
			x = &vis{start: v.Visit.VisitStart, last: v.Visit.VisitStart, engaged: map[string]uint32{}}
			visits[id] = x
			order = append(order, id)
		}
		if v.Time.After(x.last) {
			x.last = v.Time
		}
		if v.Kind == viewcount.KindView {
			x.views++
			x.lastPage = v.Page
			continue
		}
		x.engaged[v.ID] = max(x.engaged[v.ID], v.Engagement.EngagedMS)
		viewEngaged[v.ID] = max(viewEngaged[v.ID], v.Engagement.EngagedMS)
		viewScroll[v.ID] = max(viewScroll[v.ID], v.Engagement.Scroll)
		reported[v.ID] = true
	}
	for _, id := range order {
		x := visits[id]
		batch.visits++
		batch.visitMS += x.last.Sub(x.start).Milliseconds()
		batch.exits[x.lastPage]++
		var most uint32
		for _, e := range x.engaged {
			most = max(most, e)
		}
		if x.views == 1 && int64(most) < viewcount.BounceEngaged.Milliseconds() {
			batch.bounces++
		}
	}
	for _, v := range out {
		if v.Visit.Set && v.Visit.Visits == 1 {
			batch.entries[v.Page]++
		}
	}
	for id := range reported {
		batch.engaged += int64(viewEngaged[id])
		batch.hist[viewcount.EngagedBucket(viewEngaged[id])]++
		batch.scroll[viewcount.ScrollBucket(viewScroll[id])]++
	}
	if sum.visits != batch.visits || sum.bounces != batch.bounces || sum.visitMS != batch.visitMS || sum.engaged != batch.engaged {
		t.Errorf("seed %d: sums visits %d bounces %d visit ms %d engaged %d; batch %d %d %d %d", seed,
			sum.visits, sum.bounces, sum.visitMS, sum.engaged, batch.visits, batch.bounces, batch.visitMS, batch.engaged)
	}
	for _, m := range []struct {
		name     string
		sum, bat map[string]int64
	}{{"entries", sum.entries, batch.entries}, {"exits", sum.exits, batch.exits}} {
		for k := range union(m.sum, m.bat) {
			if m.sum[k] != m.bat[k] {
				t.Errorf("seed %d: %s[%s] = %d by the deltas, %d by the batch", seed, m.name, k, m.sum[k], m.bat[k])
			}
		}
	}
	for _, m := range []struct {
		name     string
		sum, bat map[int8]int64
	}{{"engaged", sum.hist, batch.hist}, {"scroll", sum.scroll, batch.scroll}} {
		for k := range union(m.sum, m.bat) {
			if m.sum[k] != m.bat[k] {
				t.Errorf("seed %d: %s histogram[%d] = %d by the deltas, %d by the batch", seed, m.name, k, m.sum[k], m.bat[k])
			}
		}
	}
}

func union[K comparable, V any](a, b map[K]V) map[K]bool {
	u := map[K]bool{}
	for k := range a {
		u[k] = true
	}
	for k := range b {
		u[k] = true
	}
	return u
}

// TestVisitsReplay: the stage is a function of the verdicts fed to it: a
// second run over the same events, capped or not, writes the same rows,
// and Reset forgets everything.
func TestVisitsReplay(t *testing.T) {
	for _, cfg := range []Config{{}, {MaxOpenViews: 3, MaxVisits: 2}} {
		run := newVisitRun(t, cfg)
		var evs []viewcount.Event
		rng := rand.New(rand.NewPCG(7, 7))
		clock := visitT0
		for i := 0; i < 2000; i++ {
			clock = clock.Add(time.Duration(rng.IntN(90_000)) * time.Millisecond)
			visitor := uint64(1 + rng.IntN(5))
			id := fmt.Sprintf("v%d", rng.IntN(i+1))
			if rng.IntN(2) == 0 {
				evs = append(evs, pageView(clock, visitor, "/p", fmt.Sprintf("v%d", i)))
			} else {
				evs = append(evs, report(clock, visitor, "/p", id, uint32(rng.IntN(60_000)), uint8(rng.IntN(101))))
			}
		}
		var first []viewcount.Verdict
		for _, e := range evs {
			first = append(first, run.feed(e))
		}
		run.r.Reset()
		for i, e := range evs {
			if got := run.feed(e); got.Reason != first[i].Reason || got.Visit != first[i].Visit {
				t.Fatalf("caps %d/%d: event %d differs after Reset: %s %+v, first %s %+v", cfg.MaxOpenViews, cfg.MaxVisits,
					i, got.Reason, got.Visit, first[i].Reason, first[i].Visit)
			}
		}
	}
}

// TestVisitsCapped: with the open-view table full, the oldest view is
// forgotten and its report is an orphan; a visit that finds the visit
// table full is not remembered, so its visitor's next view opens another.
func TestVisitsCapped(t *testing.T) {
	run := newVisitRun(t, Config{MaxOpenViews: 2, MaxVisits: 1})
	run.feed(pageView(at("0s"), 1, "/a", "a"))
	run.feed(pageView(at("1s"), 2, "/b", "b"))
	run.feed(pageView(at("2s"), 3, "/c", "c"))
	if got := run.feed(report(at("3s"), 1, "/a", "a", 1000, 0)); got.Reason != viewcount.EngagementOrphan {
		t.Errorf("report of the evicted view: %s, want orphan", got.Reason)
	}
	if got := run.feed(report(at("3s"), 3, "/c", "c", 1000, 0)); got.Reason != viewcount.Valid {
		t.Errorf("report of an open view: %s, want valid", got.Reason)
	}
	if got := run.feed(pageView(at("4s"), 2, "/b2", "b2")); got.Visit.Visits != 1 {
		t.Errorf("visitor 2's second view, its visit not remembered: %+v, want a new visit", got.Visit)
	}
	if got := run.feed(pageView(at("5s"), 1, "/a2", "a2")); got.Visit.Visits != 0 || got.Visit.PrevPage != "/a" {
		t.Errorf("visitor 1's second view: %+v, want its visit continued from /a", got.Visit)
	}
}

// TestReplayStart: a replay starts one rule window before the UTC day of
// the resume point less the engagement horizon.
func TestReplayStart(t *testing.T) {
	r := newTestRules(t, Config{})
	for _, c := range []struct{ resume, day string }{
		{"2026-11-30T15:00:00Z", "2026-11-30T00:00:00Z"},
		{"2026-11-30T00:30:00Z", "2026-11-29T00:00:00Z"}, // reports of yesterday's views may still come
		{"2026-11-30T01:00:00Z", "2026-11-30T00:00:00Z"},
	} {
		resume, _ := time.Parse(time.RFC3339, c.resume)
		day, _ := time.Parse(time.RFC3339, c.day)
		if got, want := r.ReplayStart(resume), day.Add(-r.ReplayWindow()); !got.Equal(want) {
			t.Errorf("ReplayStart(%s) = %s, want %s", c.resume, got, want)
		}
	}
}

// BenchmarkVisits is the visit stage's cost per verdict, on a day of the
// realistic mix with reports (BenchmarkValidate's stream): what it adds to
// judging, and to a replay.
func BenchmarkVisits(b *testing.B) {
	evs := withReports(stream(1<<17, 24*time.Hour, 50_000, 3), 3)
	r := newTestRules(b, Config{SettleWindow: -1})
	out := judgeVisits(r, evs) // the verdicts, judged once
	for i := range out {
		if out[i].Kind == viewcount.KindEngagement {
			out[i].Reason = ""
		}
	}
	r.Reset()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if i == len(out) {
			b.StopTimer()
			r.Reset()
			i = 0
			b.StartTimer()
		}
		v := out[i]
		r.Visit(&v)
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/verdict")
}

// TestVisitsNamesCollected: with a page of its own for nearly every view,
// over a day, the names the visits keep are collected as visits end: the
// table stays bounded by what live visits name, not by the history, and
// the deltas still add up to the batch's figures (entry and exit pages
// included), with tables of any size.
func TestVisitsNamesCollected(t *testing.T) {
	run := newVisitRun(t, Config{})
	for seed := uint64(1); seed <= 8; seed++ {
		rng := rand.New(rand.NewPCG(seed, 5))
		run.r.Reset()
		s := &run.r.visits
		s.names.from = 16
		s.maxViews, s.maxVisits = 8+rng.IntN(200), 8+rng.IntN(200)
		var out []viewcount.Verdict
		var views []viewcount.Event
		clock := visitT0
		most := 0
		for i := range 20_000 {
			// Whole milliseconds apart, as the stream's times are: two
			// visits of a visitor in one millisecond (a full table opens
			// one per view) would be one to checkBatch.
			clock = clock.Add(time.Duration(rng.ExpFloat64()*float64(4*time.Second)).Truncate(time.Millisecond) + time.Millisecond)
			if len(views) == 0 || rng.IntN(4) > 0 {
				e := pageView(clock, uint64(1+rng.IntN(300)), fmt.Sprintf("/p%d", rng.IntN(1_000_000)), fmt.Sprintf("v%d", i))
				e.Referrer = fmt.Sprintf("https://r%d.example/", rng.IntN(1_000_000))
				views = append(views, e)
				out = append(out, run.feed(e))
			} else {
				v := views[len(views)-1-rng.IntN(min(len(views), 50))]
				out = append(out, run.feed(report(clock, v.Visitor, v.Page, v.ID, uint32(rng.IntN(20_000)), uint8(rng.IntN(101)))))
			}
			most = max(most, len(s.names.strs))
			if i%500 == 0 {
				checkRefs(t, seed, s)
			}
		}
		checkRefs(t, seed, s)
		checkBatch(t, seed, out)
		// A sweep runs every gap/8 of stream time (some 110 views here), and
		// collects once the names doubled since the last: at most twice the
		// names the slab holds then, and what came since.
		if bound := 2*(7*len(s.slab)+1) + 2*200*2; most > bound {
			t.Errorf("seed %d: the names table reached %d entries; live visits bound it to %d", seed, most, bound)
		}
		for i := range s.slab {
			for _, id := range s.slab[i].named() {
				if int(*id) >= len(s.names.strs) {
					t.Fatalf("seed %d: visit %d names %d of %d", seed, i, *id, len(s.names.strs))
				}
			}
		}
	}
}

// checkRefs: every visit in the slab is named as often as its count says
// (by the visits map and by open views), and every place no one names is
// free, so visits are neither lost while named nor kept when not.
func checkRefs(t *testing.T, seed uint64, s *visitState) {
	t.Helper()
	refs := make([]int32, len(s.slab))
	for _, i := range s.visits {
		refs[i]++
	}
	for _, ov := range s.views {
		refs[ov.visit]++
	}
	free := map[int32]bool{}
	for _, i := range s.free {
		free[i] = true
	}
	for i := range s.slab {
		if s.slab[i].refs != refs[i] || (refs[i] == 0) != free[int32(i)] {
			t.Fatalf("seed %d: visit %d counts %d names, has %d (free %v)", seed, i, s.slab[i].refs, refs[i], free[int32(i)])
		}
	}
}

// TestVisitStateHasNoPointers: open views and visits stay memory the
// garbage collector does not scan.
func TestVisitStateHasNoPointers(t *testing.T) {
	for _, ty := range []reflect.Type{reflect.TypeFor[openView](), reflect.TypeFor[visit](), reflect.TypeFor[openKey]()} {
		if p := noscan.Pointers(ty, ty.Name()); len(p) > 0 {
			t.Errorf("the collector would scan every %s for %v", ty.Name(), p)
		}
	}
}

// BenchmarkVisitsGC is what 200k live visits and their open views (a few
// minutes at 20k views/s) add to a full collection: the time of runtime.GC
// with them held, each view's strings allocated apart as a decoded stream
// gives them.
//
//	go test -run '^$' -bench BenchmarkVisitsGC ./validate/judge/
func BenchmarkVisitsGC(b *testing.B) {
	const n = 200_000
	run := newVisitRun(b, Config{MaxOpenViews: n, MaxVisits: n})
	for i := range n {
		e := pageView(visitT0.Add(time.Duration(i)*time.Millisecond), uint64(i)+1,
			"/articles/"+strconv.Itoa(i%5000)+"/a-title", "id-"+strconv.Itoa(i)+"-0123456789")
		e.Referrer = "https://news.example/" + strconv.Itoa(i%300)
		run.feed(e)
	}
	runtime.GC()
	for b.Loop() {
		runtime.GC()
	}
	runtime.KeepAlive(run)
}
