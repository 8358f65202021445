package stats

import (
	"context"
	"maps"
	"strconv"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

const (
	qEngagement       = "stats_engagement"        // site, edim, evalue, vdim, vvalue, range → current, part, key, n
	qFilterEngagement = "stats_filter_engagement" // as qEngagement, with a filter (f_…) for evalue and vvalue
)

// engagement is a period's engagement and visit figures
// (docs/engagement.md): sums of the rows' deltas, and the histograms.
type engagement struct {
	engagements, engagedMS int64
	visits, bounces        int64
	visitMS, exits         int64
	engaged, scroll        viewcount.Histogram
}

// engagementFigures reads the site's, a page's or the filtered views'
// figures over cur and prev: a page's engagement is its views', its
// visits those that entered on it; with filters on one dimension, the
// passing values' rows (filter.go). Nil for filters on several
// dimensions, which no engagement rollup is kept by.
func (a *API) engagementFigures(req *request, cur, prev span) (now, before *engagement, err error) {
	p := periodParams(req.site, cur, prev, false)
	name, ok := engagementRead(req, p, qEngagement, qFilterEngagement)
	if !ok {
		return nil, nil, nil
	}
	rows, err := selectRows[queries.StatsEngagementRow](req.ctx, a, name, p)
	if err != nil {
		return nil, nil, err
	}
	now = &engagement{engaged: viewcount.Histogram{}, scroll: viewcount.Histogram{}}
	before = &engagement{engaged: viewcount.Histogram{}, scroll: viewcount.Histogram{}}
	for _, r := range rows {
		e := before
		if r.Current == 1 {
			e = now
		}
		e.add(r.Part, r.Key, r.N)
	}
	return now, before, nil
}

// engagementRead sets p's engagement and visit dimensions for req (the
// site's, a page's, or those of filters on one dimension) and names the
// query to run: plain, or filtered (the same with the f_ slot). ok is
// false for filters on several dimensions, which no engagement rollup is
// kept by.
func engagementRead(req *request, p store.Params, plain, filtered string) (name string, ok bool) {
	p["edim"], p["evalue"], p["vdim"], p["vvalue"] = "total", "", "total", ""
	switch dim := oneDim(req.filters); {
	case len(req.filters) > 0 && dim == "":
		return "", false
	case dim != "":
		p["edim"], p["vdim"] = filterEngagementDims(dim)
		slots(req.filters)[dim].bind(p, "f")
		return filtered, true
	case req.page != "":
		p["edim"], p["evalue"], p["vdim"], p["vvalue"] = "page", req.page, "entry_page", req.page
	}
	return plain, true
}

// filterEngagementDims are the engagement_rollup dimensions a filter on
// dim reads engagement and visits from: a page's visits are those that
// entered on it (as a page's summary counts them), any other dimension's
// the visits whose first view had the value.
func filterEngagementDims(dim string) (edim, vdim string) {
	if dim == "page" {
		return "page", "entry_page"
	}
	return dim, dim
}

// add reads one row of the engagement queries' long form: a sum (key 0)
// or a histogram bucket.
func (e *engagement) add(part string, key int16, n int64) {
	switch part {
	case "engagements":
		e.engagements += n
	case "engaged_ms":
		e.engagedMS += n
	case "visits":
		e.visits += n
	case "bounces":
		e.bounces += n
	case "visit_ms":
		e.visitMS += n
	case "exits":
		e.exits += n
	case "engaged_hist":
		e.engaged[int8(key)] += n
	case "scroll_hist":
		e.scroll[int8(key)] += n
	}
}

// engagementJSON is what a summary says of engagement and visits. A
// figure with nothing to measure it on (no visit, no report) is null.
type engagementJSON struct {
	Visits uint64 `json:"visits"`
	// BounceRate: the share of visits with one view engaged under 10 s.
	BounceRate *float64 `json:"bounce_rate"`
	// VisitDuration: the visits' mean duration, seconds.
	VisitDuration *float64 `json:"visit_duration"`
	// EngagedViews: views engaged for at least the site's engaged_after.
	EngagedViews uint64 `json:"engaged_views"`
	// Reported: the views that sent an accepted engagement report, which
	// the medians are taken over.
	Reported uint64 `json:"reported_views"`
	// TimeOnPage: the median engaged time of the reported views, seconds.
	TimeOnPage *float64 `json:"time_on_page"`
	// ScrollDepth: their median scroll depth, percent.
	ScrollDepth *float64 `json:"scroll_depth"`
}

func (e engagement) json(engagedAfter time.Duration) engagementJSON {
	out := engagementJSON{Visits: uint64(max(e.visits, 0)), EngagedViews: uint64(e.engaged.EngagedAtLeast(engagedAfter)),
		Reported: uint64(e.engaged.Total())}
	if e.visits > 0 {
		br := float64(max(e.bounces, 0)) / float64(e.visits)
		d := float64(max(e.visitMS, 0)) / float64(e.visits) / 1000
		out.BounceRate, out.VisitDuration = &br, &d
	}
	if out.Reported > 0 {
		t := e.engaged.EngagedMedian().Seconds()
		s := e.scroll.ScrollMedian()
		out.TimeOnPage, out.ScrollDepth = &t, &s
	}
	return out
}

// engagementChange is the relative change of each figure against the
// previous period; the bounce rate's is its difference (a rate's change is
// read in points).
type engagementChange struct {
	Visits        *float64 `json:"visits"`
	BounceRate    *float64 `json:"bounce_rate"`
	VisitDuration *float64 `json:"visit_duration"`
	EngagedViews  *float64 `json:"engaged_views"`
	TimeOnPage    *float64 `json:"time_on_page"`
	ScrollDepth   *float64 `json:"scroll_depth"`
}

func changeOf(cur, prev engagementJSON) engagementChange {
	rel := func(c, p *float64) *float64 {
		if c == nil || p == nil || *p == 0 {
			return nil
		}
		x := (*c - *p) / *p
		return &x
	}
	var br *float64
	if cur.BounceRate != nil && prev.BounceRate != nil {
		d := *cur.BounceRate - *prev.BounceRate
		br = &d
	}
	return engagementChange{Visits: relChange(cur.Visits, prev.Visits), BounceRate: br,
		VisitDuration: rel(cur.VisitDuration, prev.VisitDuration), EngagedViews: relChange(cur.EngagedViews, prev.EngagedViews),
		TimeOnPage: rel(cur.TimeOnPage, prev.TimeOnPage), ScrollDepth: rel(cur.ScrollDepth, prev.ScrollDepth)}
}

// opt is an optional figure for CSV: "" when null.
func opt(x *float64) string {
	if x == nil {
		return ""
	}
	return f(*x)
}

const (
	qEngagementValues  = "stats_engagement_values"  // site, dim, values, range → value, part, key, n
	qEngagementRanking = "stats_engagement_ranking" // site, dim, by, range, limit, offset → value, n, s_bounces, s_visit_ms, total_values
)

// engagementOf reads the figures of values of one of engagement_rollup's
// dimensions over the range of p (span params).
func (a *API) engagementOf(ctx context.Context, p store.Params, dim string, values []string) (map[string]*engagement, error) {
	p = maps.Clone(p)
	p["dim"], p["values"] = dim, store.ArrayParam(values)
	rows, err := selectRows[queries.StatsEngagementValuesRow](ctx, a, qEngagementValues, p)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*engagement, len(values))
	for _, r := range rows {
		e := out[r.Value]
		if e == nil {
			e = &engagement{engaged: viewcount.Histogram{}, scroll: viewcount.Histogram{}}
			out[r.Value] = e
		}
		e.add(r.Part, r.Key, r.N)
	}
	return out, nil
}

// pageEngagement fills the engagement columns of a page ranking's rows
// from their pages' figures (engagementOf): each page's median time on
// page and scroll depth and its engaged views, absent for a page none of
// whose views reported.
func (a *API) pageEngagement(ctx context.Context, site string, eng map[string]*engagement, rows []rowJSON) error {
	if len(rows) == 0 {
		return nil
	}
	after, err := a.cfg.EngagedAfter(ctx, site)
	if err != nil {
		return err
	}
	for i := range rows {
		e := eng[rows[i].Value]
		if e == nil || e.engaged.Total() == 0 {
			continue
		}
		j := e.json(after)
		rows[i].TimeOnPage, rows[i].ScrollDepth, rows[i].EngagedViews = j.TimeOnPage, j.ScrollDepth, &j.EngagedViews
	}
	return nil
}

// visitBreakdown ranks entry pages by visits (with each one's bounce rate
// and mean visit duration, summed by the same read) or exit pages by
// exits, from engagement_rollup.
func (a *API) visitBreakdown(req *request, by string, s span, limit, offset int) (*answer, error) {
	if req.page != "" {
		return nil, badParam("page", "by=%s ranks the site's pages: leave page out", by)
	}
	p := s.liveParams(req.site, req.now)
	p["dim"], p["by"] = by, "visits"
	if by == "exit_page" {
		p["by"] = "exits"
	}
	p["limit"], p["offset"] = strconv.Itoa(limit), strconv.Itoa(offset)
	ranked, err := selectRows[queries.StatsEngagementRankingRow](req.ctx, a, qEngagementRanking, p)
	if err != nil {
		return nil, err
	}
	out := breakdownJSON{meta: req.meta(s), By: by, Rows: make([]rowJSON, 0, len(ranked)), Limit: limit, Offset: offset}
	ans := &answer{end: s.to}
	if by == "entry_page" {
		ans.header = []string{by, "visits", "bounce_rate", "visit_duration"}
	} else {
		ans.header = []string{by, "exits"}
	}
	for _, r := range ranked {
		out.TotalValues = r.TotalValues
		n := uint64(r.N)
		row := rowJSON{Value: r.Value}
		if by == "entry_page" {
			// The ranking's own sums: an entry page's visits are n.
			e := engagement{visits: r.N, bounces: r.Bounces, visitMS: r.VisitMS}
			j := e.json(viewcount.DefaultEngagedAfter)
			row.Visits, row.BounceRate, row.VisitDuration = &n, j.BounceRate, j.VisitDuration
			ans.rows = append(ans.rows, []string{r.Value, u(n), opt(j.BounceRate), opt(j.VisitDuration)})
		} else {
			row.Exits = &n
			ans.rows = append(ans.rows, []string{r.Value, u(n)})
		}
		out.Rows = append(out.Rows, row)
	}
	ans.json = out
	return ans, nil
}
