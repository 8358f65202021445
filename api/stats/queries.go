package stats

import (
	"context"
	"fmt"
	"strconv"

	vcsql "github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
)

// Query names, files in sql/queries.
const (
	qTotal         = "stats_total"          // site, dim, page, value, range → views, uniques
	qPageTotal     = "stats_page_total"     // site, page, range → views, uniques
	qSeries        = "stats_series"         // site, grain, from, to, daily, tz → t, views, uniques
	qPageSeries    = "stats_page_series"    // as qSeries, plus page
	qBreakdown     = "stats_breakdown"      // site, dim, page, value, range, limit, offset → value, views, uniques, total_values
	qReasons       = "stats_reasons"        // site, page, range → reason, events
	qReasonSeries  = "stats_reason_series"  // site, page, from, to, daily, tz → t, reason, events
	qFilteredPages = "stats_filtered_pages" // site, range, limit → page, filtered, reason, events
	qRealtime      = "stats_realtime"       // site, from → views, visitors
)

var queryNames = []string{qTotal, qPageTotal, qSeries, qPageSeries, qBreakdown, qReasons, qReasonSeries, qFilteredPages, qRealtime}

// counts are valid views and merged uniques.
type counts struct{ views, uniques uint64 }

func (a *API) query(ctx context.Context, name string, p store.Params, columns int) ([][]string, error) {
	res, err := a.cfg.Store.Query(ctx, vcsql.Query(name), p)
	if err != nil {
		return nil, fmt.Errorf("stats: %s: %w", name, err)
	}
	for _, r := range res.Rows {
		if len(r) != columns {
			return nil, fmt.Errorf("stats: %s: %d columns, want %d", name, len(r), columns)
		}
	}
	return res.Rows, nil
}

// uints parses cells as uint64.
func uints(name string, cells ...string) ([]uint64, error) {
	out := make([]uint64, len(cells))
	for i, c := range cells {
		n, err := strconv.ParseUint(c, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("stats: %s: %w", name, err)
		}
		out[i] = n
	}
	return out, nil
}

// total is the site's (page "") or one page's views and uniques over s.
func (a *API) total(ctx context.Context, site, page string, s span) (counts, error) {
	p := s.params(site)
	name := qTotal
	if page == "" {
		p["dim"], p["page"], p["value"] = "total", "", ""
	} else {
		name = qPageTotal
		p["page"] = page
	}
	rows, err := a.query(ctx, name, p, 2)
	if err != nil || len(rows) == 0 {
		return counts{}, err
	}
	n, err := uints(name, rows[0]...)
	if err != nil {
		return counts{}, err
	}
	return counts{n[0], n[1]}, nil
}

// reasons is rejected events per reason over s, of the site or one page.
func (a *API) reasons(ctx context.Context, site, page string, s span) (map[string]uint64, uint64, error) {
	p := s.params(site)
	if page != "" {
		p = s.hourParams(site) // a page's reasons are kept in hours only
	}
	p["page"] = page
	rows, err := a.query(ctx, qReasons, p, 2)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]uint64, len(rows))
	var sum uint64
	for _, r := range rows {
		n, err := uints(qReasons, r[1])
		if err != nil {
			return nil, 0, err
		}
		out[r[0]] = n[0]
		sum += n[0]
	}
	return out, sum, nil
}

// seriesParams are the parameters of the bucketed queries.
func seriesParams(site string, s span, grain string, daily bool, tz string) store.Params {
	d := "0"
	if daily {
		d = "1"
	}
	return store.Params{"site": site, "grain": grain, "from": dbTime(s.from), "to": dbTime(s.to), "daily": d, "tz": tz}
}
