package stats

import (
	"errors"
	"strconv"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// meta is what every answer carries.
type meta struct {
	Site string `json:"site"`
	Page string `json:"page,omitempty"`
	// Filters are the request's filters as given (filter.go), besides one
	// page's (Page).
	Filters  []string `json:"filters,omitempty"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Timezone string   `json:"timezone"`
	AsOf     string   `json:"as_of"`
}

func (req *request) meta(s span) meta {
	return meta{Site: req.site, Page: req.page, Filters: filterTexts(req.filters), From: req.format(s.from), To: req.format(s.to),
		Timezone: req.loc.String(), AsOf: req.format(req.now)}
}

func (req *request) format(t time.Time) string { return t.In(req.loc).Format(time.RFC3339) }

// The sketches' precision. page_rollup keeps uniqCombined64 at its default
// precision 17: the exact set of id hashes up to 4096 ids (measured: 4096
// ids read 4096, 4097 read 4086), then a HyperLogLog of 2^17 cells with a
// relative standard error of 1.04/sqrt(2^17). dim_rollup keeps precision
// 12 (migration 008 says why): exact up to 128, then 1.04/sqrt(2^12).
type sketch struct {
	exactBelow uint64
	err        float64
}

var (
	pageSketch = sketch{4096, 0.0029} // a page's timeseries buckets
	dimSketch  = sketch{128, 0.0163}  // the site's totals and buckets, every breakdown value
)

// uniquesError is the relative standard error of a count read from k.
func (k sketch) uniquesError(uniques uint64) float64 {
	if uniques < k.exactBelow {
		return 0
	}
	return k.err
}

// exactBelow is the most views (exclusive) a page, or one value of a
// page's breakdown, may have over a range for its distinct visitors to be
// counted exactly: page_rollup's sketches of it are then exact sets, and
// so is the precision-17 count of its page_views rows. With more views
// they are dim_rollup's uniqCombined64(12) estimate. One rule for every
// reading of a page's range (its tile, its row of the page ranking, its
// own breakdowns), so they agree; docs/stats.md, "Unique visitors".
const exactBelow = 4096

// pageUniquesError is the relative standard error of a page's (or a page
// breakdown value's) uniques over a range with views views.
func pageUniquesError(views, uniques uint64) float64 {
	if views < exactBelow {
		return 0
	}
	return dimSketch.uniquesError(uniques)
}

// shown caps c's uniques at its views (viewcount.CapUniques says why):
// the last step of every count an answer carries.
func (c counts) shown() counts { return counts{c.views, viewcount.CapUniques(c.views, c.uniques)} }

type period struct {
	From     string  `json:"from"`
	To       string  `json:"to"`
	Views    uint64  `json:"views"`
	Uniques  uint64  `json:"uniques"`
	Filtered *uint64 `json:"filtered"` // null: not counted (filtered)
}

type change struct {
	Views    *float64 `json:"views"`
	Uniques  *float64 `json:"uniques"`
	Filtered *float64 `json:"filtered"`
}

type summaryJSON struct {
	meta
	Views        uint64  `json:"views"`
	Uniques      uint64  `json:"uniques"`
	UniquesError float64 `json:"uniques_error"`
	// Rejected events: null with filters on more than a page (rejected
	// events keep no other dimension).
	Filtered         *uint64           `json:"filtered"`
	FilteredByReason map[string]uint64 `json:"filtered_by_reason"`
	Previous         period            `json:"previous"`
	Change           change            `json:"change"`
	// Engagement and visits (docs/engagement.md), with the previous
	// period's and the change; EngagedAfter is the site's threshold.
	// absent with filters on several dimensions (see NotCounted).
	*engagementJSON
	EngagedAfter       float64           `json:"engaged_after"`
	PreviousEngagement *engagementJSON   `json:"previous_engagement,omitempty"`
	EngagementChange   *engagementChange `json:"engagement_change,omitempty"`
	// NotCounted names the parts of a summary a filter leaves out:
	// "filtered" (null then), "engagement" (absent then).
	NotCounted []string `json:"not_counted,omitempty"`
}

// relChange is (cur-prev)/prev, nil when prev is 0.
func relChange(cur, prev uint64) *float64 {
	if prev == 0 {
		return nil
	}
	c := (float64(cur) - float64(prev)) / float64(prev)
	return &c
}

func (a *API) summary(req *request) (*answer, error) {
	from, to, err := parseRange(req, maxDayRange)
	if err != nil {
		return nil, err
	}
	s := hourSpan(from, to)
	prev := s.previous()
	if c, ok, err := parseCompare(req); err != nil {
		return nil, err
	} else if ok {
		prev = c
	}
	var (
		sc                 summary
		engNow, engBefore  *engagement
		engErr, engagedErr error
		engagedAfter       time.Duration
		done               = make(chan struct{})
	)
	go func() {
		defer close(done)
		engNow, engBefore, engErr = a.engagementFigures(req, s, prev)
		engagedAfter, engagedErr = a.cfg.EngagedAfter(req.ctx, req.site)
	}()
	sc, err = a.summaryCounts(req, s, prev)
	<-done
	if err = errors.Join(err, engErr, engagedErr); err != nil {
		return nil, err
	}
	cur, before := sc.now.shown(), sc.before.shown()
	out := summaryJSON{meta: req.meta(s), Views: cur.views, Uniques: cur.uniques, UniquesError: sc.uniquesError(cur),
		FilteredByReason: sc.byReason,
		Previous:         period{From: req.format(prev.from), To: req.format(prev.to), Views: before.views, Uniques: before.uniques},
		Change:           change{Views: relChange(cur.views, before.views), Uniques: relChange(cur.uniques, before.uniques)},
		EngagedAfter:     engagedAfter.Seconds()}
	filtered, prevFiltered := "", ""
	if sc.byReason != nil {
		out.Filtered, out.Previous.Filtered = &sc.filtered, &sc.prevFiltered
		out.Change.Filtered = relChange(sc.filtered, sc.prevFiltered)
		filtered, prevFiltered = u(sc.filtered), u(sc.prevFiltered)
	} else {
		out.NotCounted = append(out.NotCounted, "filtered")
	}
	var engCur, engPrev engagementJSON
	if engNow != nil {
		engCur, engPrev = engNow.json(engagedAfter), engBefore.json(engagedAfter)
		ch := changeOf(engCur, engPrev)
		out.engagementJSON, out.PreviousEngagement, out.EngagementChange = &engCur, &engPrev, &ch
	} else {
		out.NotCounted = append(out.NotCounted, "engagement")
	}
	return &answer{json: out, end: s.to,
		header: []string{"from", "to", "views", "uniques", "uniques_error", "filtered", "previous_from", "previous_to", "previous_views", "previous_uniques", "previous_filtered",
			"visits", "bounce_rate", "visit_duration", "engaged_views", "reported_views", "time_on_page", "scroll_depth",
			"previous_visits", "previous_bounce_rate", "previous_visit_duration", "previous_engaged_views", "previous_time_on_page", "previous_scroll_depth"},
		rows: [][]string{append([]string{out.From, out.To, u(out.Views), u(out.Uniques), f(out.UniquesError), filtered,
			out.Previous.From, out.Previous.To, u(before.views), u(before.uniques), prevFiltered},
			append(engCur.cells(engNow != nil, true), engPrev.cells(engNow != nil, false)...)...)}}, nil
}

// cells are e's CSV cells (with reported_views for the current period):
// empty when engagement was not counted.
func (e engagementJSON) cells(counted, reported bool) []string {
	n := 6
	if reported {
		n = 7
	}
	if !counted {
		return make([]string, n)
	}
	out := []string{u(e.Visits), opt(e.BounceRate), opt(e.VisitDuration), u(e.EngagedViews)}
	if reported {
		out = append(out, u(e.Reported))
	}
	return append(out, opt(e.TimeOnPage), opt(e.ScrollDepth))
}

type bucketJSON struct {
	T       string `json:"t"`
	Views   uint64 `json:"views"`
	Uniques uint64 `json:"uniques"`
}

type seriesJSON struct {
	meta
	Interval     interval     `json:"interval"`
	UniquesError float64      `json:"uniques_error"`
	Buckets      []bucketJSON `json:"buckets"`
}

func (a *API) timeseries(req *request) (*answer, error) {
	m, err := parseMetric(req)
	if err != nil {
		return nil, err
	}
	if m != metricViews {
		return a.metricSeries(req, m)
	}
	iv, err := parseInterval(req, minute, hour, day)
	if err != nil {
		return nil, err
	}
	from, to, err := parseRange(req, iv.limit())
	if err != nil {
		return nil, err
	}
	starts, s := buckets(iv, from, to, req.loc)
	rows, seriesSketch, err := a.seriesRows(req, iv, s)
	if err != nil {
		return nil, err
	}
	byT := make(map[int64]counts, len(rows))
	for _, r := range rows {
		byT[int64(r.T)] = counts{r.Views, r.Uniques}.shown()
	}
	out := seriesJSON{meta: req.meta(span{starts[0], s.to}), Interval: iv, Buckets: make([]bucketJSON, len(starts))}
	ans := &answer{header: []string{"t", "views", "uniques"}, rows: make([][]string, len(starts)), end: s.to}
	for i, t := range starts {
		c := byT[t.Unix()]
		out.Buckets[i] = bucketJSON{T: req.format(t), Views: c.views, Uniques: c.uniques}
		if seriesSketch != nil {
			out.UniquesError = max(out.UniquesError, seriesSketch.uniquesError(c.uniques))
		} else {
			out.UniquesError = max(out.UniquesError, pageUniquesError(c.views, c.uniques))
		}
		ans.rows[i] = []string{out.Buckets[i].T, u(c.views), u(c.uniques)}
	}
	if iv == day {
		out.To = req.format(nextDay(starts[len(starts)-1], req.loc))
	}
	ans.json = out
	return ans, nil
}

// seriesRows reads a views timeseries' buckets: the site's, a page's or
// the filtered views' (filterSeries). sk is the sketch the uniques were
// read from, nil when they follow a page's rule.
func (a *API) seriesRows(req *request, iv interval, s span) (rows []queries.StatsSeriesRow, sk *sketch, err error) {
	if len(req.filters) > 0 {
		return a.filterSeries(req, iv, s)
	}
	grain, daily := seriesGrain(iv, req.loc, req.page == "")
	p := seriesParams(req.site, s, grain, daily, req.loc.String())
	name, sk := qSeries, &dimSketch
	if req.page != "" {
		// A page's buckets come from page_rollup, the one rollup with a
		// page's minutes and hours (dim_rollup's hour rows of one page are
		// scattered among every page's:
		// docs/benchmarks/history/issue-10-session-3.md, "Stats API
		// latency: live ranges").
		name, p["page"], sk = qPageSeries, req.page, &pageSketch
	}
	rows, err = selectRows[queries.StatsSeriesRow](req.ctx, a, name, p)
	return rows, sk, err
}

type realtimeJSON struct {
	meta
	Views5m      uint64  `json:"views_5m"`
	VisitorsNow  uint64  `json:"visitors_now"`
	UniquesError float64 `json:"uniques_error"`
	LagSeconds   float64 `json:"lag_seconds"`
	// FirstDay (with ?first_day=1): the site's first day with a counted
	// view, in its zone; absent when none. The dashboard's "All time".
	FirstDay string `json:"first_day,omitempty"`
}

// realtime counts the last five minutes: the current minute and the four
// before it, from the minute rollup; lag says how far counting of the site
// is behind (0 when nothing of it waits).
func (a *API) realtime(req *request) (*answer, error) {
	from := req.now.Truncate(time.Minute).Add(-4 * time.Minute)
	rows, err := selectRows[queries.StatsRealtimeRow](req.ctx, a, qRealtime, store.Params{"site": req.site, "from": dbTime(from)})
	if err != nil {
		return nil, err
	}
	var c counts
	if len(rows) == 1 {
		c = counts{rows[0].Views, rows[0].Visitors}.shown()
	}
	req.page, req.filters = "", nil // realtime is the whole site's
	out := realtimeJSON{meta: req.meta(span{from, req.now}), Views5m: c.views, VisitorsNow: c.uniques,
		UniquesError: dimSketch.uniquesError(c.uniques), LagSeconds: a.cfg.Lag(req.site).Seconds()}
	if req.get("first_day") == "1" {
		days, err := selectRows[queries.StatsFirstDayRow](req.ctx, a, qFirstDay, store.Params{"site": req.site})
		if err != nil {
			return nil, err
		}
		if len(days) == 1 && days[0].Days > 0 {
			out.FirstDay = time.Unix(int64(days[0].T), 0).In(req.loc).Format(time.DateOnly)
		}
	}
	return &answer{json: out, header: []string{"views_5m", "visitors_now", "lag_seconds"},
		rows: [][]string{{u(c.views), u(c.uniques), f(out.LagSeconds)}}}, nil
}

func u(n uint64) string  { return strconv.FormatUint(n, 10) }
func f(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
