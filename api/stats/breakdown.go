package stats

import (
	"context"
	"encoding/csv"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"golang.org/x/sync/errgroup"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// dims maps the breakdown's by= names to dim_rollup's dim values.
var dims = map[string]string{
	"page": "page", "source": "source", "referrer": "referrer",
	"utm_source": "utm_source", "utm_medium": "utm_medium", "utm_campaign": "utm_campaign",
	"browser": "browser", "os": "os", "device": "device", "country": "country", "screen": "screen",
	"channel": channel, // no rollup: page_views (filter.go)
}

// visitDims are the breakdowns read from engagement_rollup alone
// (visitBreakdown).
var visitDims = map[string]bool{"entry_page": true, "exit_page": true}

const byNames = "page, entry_page, exit_page, source, channel, referrer, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen"

// emptyValue is how a breakdown names a value the store holds as the empty
// string, which means different things by dimension (docs/stats.md,
// "Empty values"). A referrer is empty exactly when the source is
// "(direct)" (no referrer, or one from the site itself: validate's
// referrerDims), so both panels name direct traffic alike; a UTM tag is
// empty when the view carried none, as most views do, which is nothing
// unknown; any other dimension is empty when it could not be told (a
// pixel view has no screen class, an address no country) or for rows
// stored before the dimension existed.
func emptyValue(by string) string {
	switch by {
	case "referrer":
		return "(direct)"
	case "utm_source", "utm_medium", "utm_campaign":
		return "(none)"
	}
	return "(unknown)"
}

type rowJSON struct {
	Value   string `json:"value"`
	Views   uint64 `json:"views"`
	Uniques uint64 `json:"uniques"`
	// A page's engagement (by=page; absent when none of its views
	// reported): docs/engagement.md.
	TimeOnPage   *float64 `json:"time_on_page,omitempty"`
	ScrollDepth  *float64 `json:"scroll_depth,omitempty"`
	EngagedViews *uint64  `json:"engaged_views,omitempty"`
	// by=entry_page: the visits that entered there; by=exit_page: those
	// that left from there (views and uniques are 0 then).
	Visits        *uint64  `json:"visits,omitempty"`
	BounceRate    *float64 `json:"bounce_rate,omitempty"`
	VisitDuration *float64 `json:"visit_duration,omitempty"`
	Exits         *uint64  `json:"exits,omitempty"`
	// PreviousViews: the value's views in the period compared with
	// (compare_from, compare_to), 0 when it had none there.
	PreviousViews *uint64 `json:"previous_views,omitempty"`
}

type breakdownJSON struct {
	meta
	By           string    `json:"by"`
	UniquesError float64   `json:"uniques_error"`
	Rows         []rowJSON `json:"rows"`
	TotalValues  uint64    `json:"total_values"`
	Limit        int       `json:"limit"`
	Offset       int       `json:"offset"`
	// Previous is the period compared with, when one was asked for.
	Previous *spanJSON `json:"previous,omitempty"`
}

type spanJSON struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// intParam reads a non-negative integer parameter up to hi, def when absent.
func intParam(req *request, name string, def, lo, hi int) (int, error) {
	v := req.get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badParam(name, "want a whole number from %d to %d", lo, hi)
	}
	return n, nil
}

func (a *API) breakdown(req *request) (*answer, error) {
	ans, err := a.ranking(req)
	if err != nil {
		return nil, err
	}
	prev, ok, err := parseCompare(req)
	if err != nil || !ok {
		return ans, err
	}
	return ans, a.addPrevious(req, prev, ans)
}

func (a *API) ranking(req *request) (*answer, error) {
	by := req.get("by")
	dim, ok := dims[by]
	if !ok && !visitDims[by] {
		return nil, badParam("by", "want one of %s", byNames)
	}
	limit, err := intParam(req, "limit", 10, 1, 1000)
	if err != nil {
		return nil, err
	}
	offset, err := intParam(req, "offset", 0, 0, 1_000_000)
	if err != nil {
		return nil, err
	}
	from, to, err := parseRange(req, maxDayRange)
	if err != nil {
		return nil, err
	}
	s := hourSpan(from, to)
	if visitDims[by] {
		if len(req.filters) > 0 {
			return nil, badParam("filter", "by=%s ranks the site's visits; filters apply to views: leave them out", by)
		}
		return a.visitBreakdown(req, by, s, limit, offset)
	}
	if by == channel {
		return a.filterBreakdown(req, by, s, limit, offset)
	}
	if by != "page" && req.page != "" {
		return a.pageBreakdown(req, by, filterDims[by], s, limit, offset)
	}
	name := qBreakdown
	p := s.liveParams(req.site, req.now)
	p["dim"], p["page"], p["value"] = dim, req.page, ""
	p["limit"], p["offset"] = strconv.Itoa(limit), strconv.Itoa(offset)
	if len(req.filters) > 0 {
		if oneDim(req.filters) != by {
			return a.filterBreakdown(req, by, s, limit, offset)
		}
		// Filters on the dimension ranked: its rows whose value passes.
		name = qFilterBreakdown
		slots(req.filters)[by].bind(p, "f")
	}
	if by == "page" && req.page != "" {
		// The pages of one page: its own row of the all-pages breakdown.
		p["page"], p["value"] = "", req.page
	}
	rows, err := selectRows[queries.StatsBreakdownRow](req.ctx, a, name, p)
	if err != nil {
		return nil, err
	}
	// A page ranking's engagement columns are read beside its uniques
	// (the store has two query connections): in turn they cost the call
	// their sum.
	var eng map[string]*engagement
	var g errgroup.Group
	if by == "page" && len(rows) > 0 {
		pages := make([]string, len(rows))
		for i, r := range rows {
			pages[i] = r.Value
		}
		g.Go(func() (err error) {
			eng, err = a.engagementOf(req.ctx, p, "page", pages)
			return err
		})
	}
	uniques, err := a.rankingUniques(req.ctx, by, p, rows)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	out := breakdownJSON{meta: req.meta(s), By: by, Rows: make([]rowJSON, 0, len(rows)), Limit: limit, Offset: offset}
	ans := &answer{header: []string{by, "views", "uniques"}, end: s.to}
	for _, r := range rows {
		u := viewcount.CapUniques(r.Views, uniques[r.Value])
		v := r.Value
		if v == "" {
			v = emptyValue(by)
		}
		out.Rows = append(out.Rows, rowJSON{Value: v, Views: r.Views, Uniques: u})
		out.TotalValues = r.TotalValues
		if by == "page" {
			out.UniquesError = max(out.UniquesError, pageUniquesError(r.Views, u))
		} else {
			out.UniquesError = max(out.UniquesError, dimSketch.uniquesError(u))
		}
		ans.rows = append(ans.rows, []string{v, strconv.FormatUint(r.Views, 10), strconv.FormatUint(u, 10)})
	}
	if by == "page" {
		if err := a.pageEngagement(req.ctx, req.site, eng, out.Rows); err != nil {
			return nil, err
		}
		ans.header = append(ans.header, "time_on_page", "scroll_depth", "engaged_views")
		for i, r := range out.Rows {
			engaged := ""
			if r.EngagedViews != nil {
				engaged = strconv.FormatUint(*r.EngagedViews, 10)
			}
			ans.rows[i] = append(ans.rows[i], opt(r.TimeOnPage), opt(r.ScrollDepth), engaged)
		}
	}
	if len(rows) == 0 && offset > 0 {
		// Past the last value: count them for the client's pager.
		p["offset"] = "0"
		p["limit"] = "1"
		if rows, err = selectRows[queries.StatsBreakdownRow](req.ctx, a, name, p); err != nil {
			return nil, err
		}
		if len(rows) == 1 {
			out.TotalValues = rows[0].TotalValues
		}
	}
	ans.json = out
	return ans, nil
}

// pageBreakdown is breakdown of one page by a dimension (column, its
// page_views column).
func (a *API) pageBreakdown(req *request, by, column string, s span, limit, offset int) (*answer, error) {
	p := s.params(req.site)
	p["page"], p["column"], p["exact"] = req.page, column, strconv.Itoa(exactBelow)
	return valueRows(req, by, s, limit, offset, func(limit, offset int) ([]queries.StatsBreakdownPageRow, error) {
		p["limit"], p["offset"] = strconv.Itoa(limit), strconv.Itoa(offset)
		return selectRows[queries.StatsBreakdownPageRow](req.ctx, a, qBreakdownPage, p)
	})
}

// valueRows is a breakdown answer from rows of values with their views and
// uniques counted by a page's rule (pageUniquesError), one page of them
// from fetch.
func valueRows(req *request, by string, s span, limit, offset int, fetch func(limit, offset int) ([]queries.StatsBreakdownPageRow, error)) (*answer, error) {
	rows, err := fetch(limit, offset)
	if err != nil {
		return nil, err
	}
	out := breakdownJSON{meta: req.meta(s), By: by, Rows: make([]rowJSON, 0, len(rows)), Limit: limit, Offset: offset}
	ans := &answer{header: []string{by, "views", "uniques"}, end: s.to}
	for _, r := range rows {
		v := r.Value
		if v == "" {
			v = emptyValue(by)
		}
		uq := viewcount.CapUniques(r.Views, r.Uniques)
		out.Rows = append(out.Rows, rowJSON{Value: v, Views: r.Views, Uniques: uq})
		out.TotalValues = r.TotalValues
		out.UniquesError = max(out.UniquesError, pageUniquesError(r.Views, uq))
		ans.rows = append(ans.rows, []string{v, strconv.FormatUint(r.Views, 10), strconv.FormatUint(uq, 10)})
	}
	if len(rows) == 0 && offset > 0 {
		// Past the last value: count them for the client's pager.
		if rows, err = fetch(1, 0); err != nil {
			return nil, err
		}
		if len(rows) == 1 {
			out.TotalValues = rows[0].TotalValues
		}
	}
	ans.json = out
	return ans, nil
}

// rankingUniques reads the uniques of a ranking's values (rows of
// qBreakdown: value, views, …) over the range of p. A page with fewer than
// exactBelow views is counted exactly from page_rollup (pageExact), as its
// tile is; every other value merges dim_rollup's sketches
// (stats_breakdown_uniques), also as a large page's tile does. The two
// reads run side by side on the store's two query connections.
func (a *API) rankingUniques(ctx context.Context, by string, p store.Params, rows []queries.StatsBreakdownRow) (map[string]uint64, error) {
	var small, large []string
	for _, r := range rows {
		if by == "page" && r.Views < exactBelow {
			small = append(small, r.Value)
		} else {
			large = append(large, r.Value)
		}
	}
	var exact map[string]uint64
	var g errgroup.Group
	if len(small) > 0 {
		g.Go(func() (err error) {
			exact, err = a.pageExact(ctx, p, small)
			return err
		})
	}
	out := make(map[string]uint64, len(rows))
	if len(large) > 0 {
		lp := maps.Clone(p)
		lp["values"] = store.ArrayParam(large)
		urows, err := selectRows[queries.StatsBreakdownUniquesRow](ctx, a, qBreakdownUniq, lp)
		for _, r := range urows {
			out[r.Value] = r.Uniques
		}
		if err != nil {
			_ = g.Wait()
			return nil, err
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	maps.Copy(out, exact)
	return out, nil
}

// writeCSV answers with the CSV form: a header row, then one row per item.
// Cells a spreadsheet would run as a formula (page paths and referrers are
// visitor-controlled) are prefixed with a quote, in a copy: the answer
// may be cached.
func writeCSV(c *gin.Context, ans *answer) {
	c.Header("Content-Type", "text/csv; charset=utf-8")
	c.Status(http.StatusOK)
	w := csv.NewWriter(c.Writer)
	_ = w.Write(ans.header)
	out := make([]string, len(ans.header))
	for _, r := range ans.rows {
		out = append(out[:0], r...)
		for i, cell := range out {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) && !isNumber(cell) {
				out[i] = "'" + cell
			}
		}
		_ = w.Write(out)
	}
	w.Flush()
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// addPrevious gives each row of a breakdown its views in prev, read as
// the row was (the same rollup or page_views, the same filters) with the
// rows' values as one more filter. Entry and exit pages rank visits: they
// get no previous views.
func (a *API) addPrevious(req *request, prev span, ans *answer) error {
	out := ans.json.(breakdownJSON)
	if visitDims[out.By] {
		return nil
	}
	by := out.By
	values := make([]string, len(out.Rows))
	for i, r := range out.Rows {
		values[i] = r.Value
		if r.Value == emptyValue(by) {
			values[i] = ""
		}
	}
	views := map[string]uint64{}
	if len(values) > 0 {
		var err error
		if views, err = a.viewsOf(req, by, values, prev); err != nil {
			return err
		}
	}
	out.Previous = &spanJSON{From: req.format(prev.from), To: req.format(prev.to)}
	ans.header = append(ans.header, "previous_views")
	for i := range out.Rows {
		n := views[values[i]]
		out.Rows[i].PreviousViews = &n
		ans.rows[i] = append(ans.rows[i], strconv.FormatUint(n, 10))
	}
	ans.json = out
	return nil
}

// viewsOf is the views of some values of by over s under req's filters.
func (a *API) viewsOf(req *request, by string, values []string, s span) (map[string]uint64, error) {
	in := []filter{{dim: by, op: opIs, values: values}}
	out := make(map[string]uint64, len(values))
	fs := slices.Concat(req.filters, in)
	if by != channel && oneDim(fs) == by && (req.page == "" || by == "page") {
		// The ranking's own rows: its dimension's rollup rows.
		p := s.params(req.site)
		p["dim"], p["limit"], p["offset"] = dims[by], strconv.Itoa(len(values)), "0"
		slots(in)[by].bind(p, "f")
		rows, err := selectRows[queries.StatsBreakdownRow](req.ctx, a, qFilterBreakdown, p)
		for _, r := range rows {
			out[r.Value] = r.Views
		}
		return out, err
	}
	r := *req
	r.filters = fs
	rows, err := a.filterViews(req.ctx, &r, s, filterDims[by], "none", len(values), 0)
	for _, row := range rows {
		out[row.Value] = row.Views
	}
	return out, err
}
