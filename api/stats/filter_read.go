package stats

import (
	"context"
	"slices"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// The filtered reads (filter.go says which answers which).
const (
	qFilterTotal            = "stats_filter_total"             // site, dim, f_…, range → current, views, uniques
	qFilterSeries           = "stats_filter_series"            // site, dim, f_…, grain, from, to, daily, tz → t, views, uniques
	qFilterBreakdown        = "stats_filter_breakdown"         // site, dim, f_…, range, limit, offset → value, views, total_values
	qFilterEngagementSeries = "stats_filter_engagement_series" // as qEngagementSeries, with f_…
	qFilterViews            = "stats_filter_views"             // site, <dim>_…, column, step, tz, exact, from, to, limit, offset → value, t, views, uniques, total_values
	qFilterViewsChannel     = "stats_filter_views_channel"     // as qFilterViews, and kind_names, kind_of: with the channel
)

// filterTotals is a filtered summary's views and uniques: from the
// filtered dimension's rollup rows when every filter names one, else from
// page_views. Rejected events are not counted (nil byReason).
func (a *API) filterTotals(req *request, cur, prev span) (summary, error) {
	if dim := oneDim(req.filters); dim != "" {
		p := periodParams(req.site, cur, prev, false)
		p["dim"] = dim
		slots(req.filters)[dim].bind(p, "f")
		rows, err := selectRows[queries.StatsPageTotalRow](req.ctx, a, qFilterTotal, p)
		if err != nil {
			return summary{}, err
		}
		var out summary
		for _, r := range rows {
			if r.Current == 1 {
				out.now = counts{r.Views, r.Uniques}
			} else {
				out.before = counts{r.Views, r.Uniques}
			}
		}
		return out, nil
	}
	out := summary{pageRule: true}
	var g errgroup.Group
	for _, c := range []struct {
		c *counts
		s span
	}{{&out.now, cur}, {&out.before, prev}} {
		g.Go(func() error {
			rows, err := a.filterViews(req.ctx, req, c.s, "site", "none", 1, 0)
			if err == nil && len(rows) == 1 {
				*c.c = counts{rows[0].Views, rows[0].Uniques}
			}
			return err
		})
	}
	return out, g.Wait()
}

// filterViews reads page_views' views of s that pass req's filters (and
// its page), grouped by column and step (queries/stats_filter_views.sql,
// or its twin with the channel when that is grouped by or filtered).
func (a *API) filterViews(ctx context.Context, req *request, s span, column, step string, limit, offset int) ([]queries.StatsFilterViewsRow, error) {
	p := store.Params{"site": req.site, "from": dbTime(s.from), "to": dbTime(s.to), "column": column, "step": step,
		"tz": req.loc.String(), "exact": strconv.Itoa(exactBelow), "limit": strconv.Itoa(limit), "offset": strconv.Itoa(offset)}
	fs := req.filters
	if req.page != "" {
		fs = append(slices.Clip(fs), filter{dim: "page", op: opIs, values: []string{req.page}})
	}
	sl := slots(fs)
	name := qFilterViews
	if column == channel || sl[channel] != nil {
		name = qFilterViewsChannel
		p["kind_names"], p["kind_of"] = a.kindNames, a.kindOf
	}
	for dim := range filterDims {
		if dim != channel || name == qFilterViewsChannel {
			sl[dim].bind(p, dim)
		}
	}
	return selectRows[queries.StatsFilterViewsRow](ctx, a, name, p)
}

// filterSeries is a filtered views timeseries' rows: hour and day buckets
// of filters on one dimension from its rollup rows, anything else from
// page_views. sk is the sketch the uniques were read from, nil for a
// page's rule.
func (a *API) filterSeries(req *request, iv interval, s span) (rows []queries.StatsSeriesRow, sk *sketch, err error) {
	if dim := oneDim(req.filters); dim != "" && iv != minute {
		grain, daily := seriesGrain(iv, req.loc, true)
		p := seriesParams(req.site, s, grain, daily, req.loc.String())
		p["dim"] = dim
		slots(req.filters)[dim].bind(p, "f")
		rows, err = selectRows[queries.StatsSeriesRow](req.ctx, a, qFilterSeries, p)
		return rows, &dimSketch, err
	}
	vrows, err := a.filterViews(req.ctx, req, s, "site", string(iv), maxSeriesBuckets, 0)
	for _, r := range vrows {
		rows = append(rows, queries.StatsSeriesRow{T: r.T, Views: r.Views, Uniques: r.Uniques})
	}
	return rows, nil, err
}

// maxSeriesBuckets bounds a timeseries' buckets: a day of minutes, 400
// days, a week of hours.
const maxSeriesBuckets = 1440

// filterBreakdown is a breakdown by a dimension other than the one every
// filter names, or with filters on several: page_views' views of s that
// pass, grouped by the dimension's column.
func (a *API) filterBreakdown(req *request, by string, s span, limit, offset int) (*answer, error) {
	fetch := func(limit, offset int) ([]queries.StatsBreakdownPageRow, error) {
		rows, err := a.filterViews(req.ctx, req, s, filterDims[by], "none", limit, offset)
		out := make([]queries.StatsBreakdownPageRow, len(rows))
		for i, r := range rows {
			out[i] = queries.StatsBreakdownPageRow{Value: r.Value, Views: r.Views, Uniques: r.Uniques, TotalValues: r.TotalValues}
		}
		return out, err
	}
	return valueRows(req, by, s, limit, offset, fetch)
}
