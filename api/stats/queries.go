package stats

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"golang.org/x/sync/errgroup"
)

// Query names, files in sql/queries.
const (
	qPageTotal     = "stats_page_total"        // site, page, range → views, uniques (dim_rollup's 'page' rows)
	qPageExact     = "stats_page_exact"        // site, pages, range → page, exact uniques (each page under exactBelow views)
	qSeries        = "stats_series"            // site, grain, from, to, daily, tz → t, views, uniques
	qPageSeries    = "stats_page_series"       // as qSeries, plus page
	qBreakdown     = "stats_breakdown"         // site, dim, page, value, range, limit, offset → value, views, total_values
	qBreakdownUniq = "stats_breakdown_uniques" // site, dim, page, values, range → value, uniques
	qBreakdownPage = "stats_breakdown_page"    // site, page, column, range, limit, offset → value, views, uniques, total_values
	qReasons       = "stats_reasons"           // site, page, range → reason, events
	qReasonSeries  = "stats_reason_series"     // site, page, from, to, daily, tz → t, reason, events
	qFilteredPages = "stats_filtered_pages"    // site, range, limit → page, filtered
	qFilteredWhy   = "stats_filtered_reasons"  // site, pages, from, to → page, reason, events
	qRealtime      = "stats_realtime"          // site, from → views, visitors
	qSummary       = "stats_summary"           // site, range → current, reason, views, uniques
	qFirstDay      = "stats_first_day"         // site → t, days
)

var queryNames = []string{qFirstDay, qFilterTotal, qFilterSeries, qFilterBreakdown, qFilterEngagement, qFilterEngagementSeries, qFilterViews, qFilterViewsChannel, qEngagement, qEngagementSeries, qEngagementValues, qEngagementRanking, qSummary, qPageTotal, qPageExact, qSeries, qPageSeries, qBreakdown, qBreakdownUniq, qBreakdownPage, qReasons, qReasonSeries, qFilteredPages, qFilteredWhy, qRealtime}

// counts are valid views and merged uniques.
type counts struct{ views, uniques uint64 }

// selectRows runs the named query and scans its rows into T, its row type
// in sql/queries (rows.go): each column read by name, a missing column or
// a value T cannot hold exactly being the error.
func selectRows[T any](ctx context.Context, a *API, name string, p store.Params) ([]T, error) {
	rows, err := store.Select[T](ctx, a.cfg.Store, queries.Text(name), p)
	if err != nil {
		return nil, fmt.Errorf("stats: %s: %w", name, err)
	}
	return rows, nil
}

// pageTotal is one page's views and uniques over cur and over prev (the
// period before it; zero for none), read as the site's page ranking reads
// the page's row (breakdown by page), so the two agree: views and the
// uniqCombined64(12) estimate from dim_rollup's 'page' rows, then the
// exact count instead for a period with fewer than exactBelow views
// (pageExact). A site's totals come with its summary (qSummary).
func (a *API) pageTotal(ctx context.Context, site, page string, cur, prev span) (now, before counts, err error) {
	p := periodParams(site, cur, prev, false)
	p["page"] = page
	rows, err := selectRows[queries.StatsPageTotalRow](ctx, a, qPageTotal, p)
	if err != nil {
		return counts{}, counts{}, err
	}
	for _, r := range rows {
		if r.Current == 1 {
			now = counts{r.Views, r.Uniques}
		} else {
			before = counts{r.Views, r.Uniques}
		}
	}
	var g errgroup.Group
	for _, c := range []struct {
		c *counts
		s span
	}{{&now, cur}, {&before, prev}} {
		if c.c.views == 0 || c.c.views >= exactBelow {
			continue
		}
		g.Go(func() error {
			exact, err := a.pageExact(ctx, c.s.params(site), []string{page})
			if err == nil {
				c.c.uniques = exact[page]
			}
			return err
		})
	}
	return now, before, g.Wait()
}

// pageExact is the exact number of distinct visitors of each of pages
// over the range of p (span params), each page having fewer than
// exactBelow views there: page_rollup's sketches of such a page are exact
// sets (queries/stats_page_exact.sql).
func (a *API) pageExact(ctx context.Context, p store.Params, pages []string) (map[string]uint64, error) {
	p = maps.Clone(p) // the caller's may be read beside this
	p["pages"] = store.ArrayParam(pages)
	rows, err := selectRows[queries.StatsPageExactRow](ctx, a, qPageExact, p)
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint64, len(rows))
	for _, r := range rows {
		out[r.Page] = r.Uniques
	}
	return out, nil
}

// summary is what a summary counts: views and uniques, and rejected events
// by reason and in all, over a range and the period before it. byReason
// is nil when rejected events were not counted (filters).
type summary struct {
	now, before            counts
	byReason               map[string]uint64
	filtered, prevFiltered uint64
	// pageRule: uniques counted by a page's rule (pageUniquesError),
	// else read from dim_rollup's sketches.
	pageRule bool
}

func (s summary) uniquesError(c counts) float64 {
	if s.pageRule {
		return pageUniquesError(c.views, c.uniques)
	}
	return dimSketch.uniquesError(c.uniques)
}

// summaryCounts reads a summary of the site in one query of dim_rollup, or
// of one page from page_rollup (its totals) beside dim_rollup (its
// reasons), the two side by side on the store's two query connections; or
// of filtered views (filterTotals).
func (a *API) summaryCounts(req *request, cur, prev span) (summary, error) {
	ctx, site, page := req.ctx, req.site, req.page
	out := summary{pageRule: page != ""}
	if len(req.filters) > 0 {
		return a.filterTotals(req, cur, prev)
	}
	if page != "" {
		var (
			totalErr error
			done     = make(chan struct{})
		)
		go func() {
			defer close(done)
			out.now, out.before, totalErr = a.pageTotal(ctx, site, page, cur, prev)
		}()
		var err error
		out.byReason, out.filtered, out.prevFiltered, err = a.reasons(ctx, site, page, cur, prev)
		<-done
		return out, errors.Join(totalErr, err)
	}
	rows, err := selectRows[queries.StatsSummaryRow](ctx, a, qSummary, periodParams(site, cur, prev, false))
	if err != nil {
		return out, err
	}
	out.byReason = map[string]uint64{}
	for _, r := range rows {
		switch {
		case r.Reason == "" && r.Current == 1:
			out.now = counts{r.Views, r.Uniques}
		case r.Reason == "":
			out.before = counts{r.Views, r.Uniques}
		case r.Current == 1:
			out.byReason[r.Reason] = r.Views
			out.filtered += r.Views
		default:
			out.prevFiltered += r.Views
		}
	}
	return out, nil
}

// reasons is rejected events per reason over cur, of the site or one page,
// their sum, and the sum over prev (the period before; zero for none).
func (a *API) reasons(ctx context.Context, site, page string, cur, prev span) (map[string]uint64, uint64, uint64, error) {
	p := periodParams(site, cur, prev, page != "") // a page's reasons are kept in hours only
	p["page"] = page
	rows, err := selectRows[queries.StatsReasonsRow](ctx, a, qReasons, p)
	if err != nil {
		return nil, 0, 0, err
	}
	out := make(map[string]uint64, len(rows))
	var sum, prevSum uint64
	for _, r := range rows {
		if r.Current == 0 {
			prevSum += r.Events
			continue
		}
		out[r.Reason] = r.Events
		sum += r.Events
	}
	return out, sum, prevSum, nil
}

// seriesGrain is the rollup grain a timeseries of iv reads, and whether
// its rows are grouped by the day they start in the site's zone (daily).
// Day buckets of a UTC site are the day rows themselves: merging 30 day
// sketches instead of 720 hour ones cut a month's series 3x (51 to 16 ms
// at p50 on the 10M-event history). Other zones' days straddle two UTC
// days, so they are grouped from hours. dayRows says the table read has
// day rows of the same sketch (dim_rollup); page_rollup's day rows are
// read from wider granules than its hours (migration 004) and measured
// slower, so a page's series stays on hours.
func seriesGrain(iv interval, loc *time.Location, dayRows bool) (grain string, daily bool) {
	switch {
	case iv != day:
		return string(iv), false
	case dayRows && loc == time.UTC:
		return string(day), false
	}
	return string(hour), true
}

// seriesParams are the parameters of the bucketed queries.
func seriesParams(site string, s span, grain string, daily bool, tz string) store.Params {
	d := "0"
	if daily {
		d = "1"
	}
	return store.Params{"site": site, "grain": grain, "from": dbTime(s.from), "to": dbTime(s.to), "daily": d, "tz": tz}
}
