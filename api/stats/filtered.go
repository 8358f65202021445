package stats

import (
	"sort"
	"strconv"

	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

type reasonBucket struct {
	T        string            `json:"t"`
	ByReason map[string]uint64 `json:"by_reason"`
}

type filteredPage struct {
	Page     string            `json:"page"`
	Filtered uint64            `json:"filtered"`
	ByReason map[string]uint64 `json:"by_reason"`
}

type filteredJSON struct {
	meta
	Interval interval          `json:"interval"`
	Filtered uint64            `json:"filtered"`
	ByReason map[string]uint64 `json:"by_reason"`
	Buckets  []reasonBucket    `json:"buckets"`
	TopPages []filteredPage    `json:"top_pages"`
}

// filtered answers the dashboard's filtered-traffic panel: rejected events
// by reason per bucket, and the pages with the most rejected events with
// theirs (limit pages, default 10). With a page filter, that page only.
func (a *API) filtered(req *request) (*answer, error) {
	if len(req.filters) > 0 {
		return nil, badParam("filter", "rejected events keep no dimension but their page: use page=")
	}
	iv, err := parseInterval(req, hour, day)
	if err != nil {
		return nil, err
	}
	limit, err := intParam(req, "limit", 10, 1, 100)
	if err != nil {
		return nil, err
	}
	from, to, err := parseRange(req, iv.limit())
	if err != nil {
		return nil, err
	}
	starts, s := buckets(iv, from, to, req.loc)
	// The top pages are read beside the buckets (two query connections).
	var (
		top    []filteredPage
		topErr error
		done   = make(chan struct{})
	)
	go func() {
		defer close(done)
		top, topErr = a.topFiltered(req, span{starts[0], s.to}, limit)
	}()
	rows, err := selectRows[queries.StatsReasonSeriesRow](req.ctx, a, qReasonSeries, func() store.Params {
		// A page's reason rows are hours only (migration 008).
		grain, daily := seriesGrain(iv, req.loc, req.page == "")
		p := seriesParams(req.site, s, grain, daily, req.loc.String())
		p["page"] = req.page
		return p
	}())
	<-done
	if err == nil {
		err = topErr
	}
	if err != nil {
		return nil, err
	}
	out := filteredJSON{meta: req.meta(span{starts[0], s.to}), Interval: iv, ByReason: map[string]uint64{},
		Buckets: make([]reasonBucket, len(starts)), TopPages: []filteredPage{}}
	if iv == day {
		out.To = req.format(nextDay(starts[len(starts)-1], req.loc))
	}
	index := make(map[int64]int, len(starts))
	for i, t := range starts {
		index[t.Unix()] = i
		out.Buckets[i] = reasonBucket{T: req.format(t), ByReason: map[string]uint64{}}
	}
	for _, r := range rows {
		i, ok := index[int64(r.T)]
		if !ok {
			continue // an hour outside the local days (zones with a non-hour offset)
		}
		out.Buckets[i].ByReason[r.Reason] += r.Events
		out.ByReason[r.Reason] += r.Events
		out.Filtered += r.Events
	}
	ans := &answer{header: []string{"kind", "t", "page", "reason", "filtered"}, end: s.to}
	for _, b := range out.Buckets {
		for _, r := range sortedKeys(b.ByReason) {
			ans.rows = append(ans.rows, []string{"bucket", b.T, "", r, u(b.ByReason[r])})
		}
	}
	out.TopPages = top
	for _, p := range out.TopPages {
		for _, r := range sortedKeys(p.ByReason) {
			ans.rows = append(ans.rows, []string{"page", "", p.Page, r, u(p.ByReason[r])})
		}
	}
	ans.json = out
	return ans, nil
}

func (a *API) topFiltered(req *request, s span, limit int) ([]filteredPage, error) {
	s = hourSpan(s.from, s.to)
	if req.page != "" {
		byReason, sum, _, err := a.reasons(req.ctx, req.site, req.page, s, span{})
		if err != nil || sum == 0 {
			return []filteredPage{}, err
		}
		return []filteredPage{{Page: req.page, Filtered: sum, ByReason: byReason}}, nil
	}
	p := s.params(req.site)
	p["limit"] = strconv.Itoa(limit)
	top, err := selectRows[queries.StatsFilteredPagesRow](req.ctx, a, qFilteredPages, p)
	if err != nil {
		return nil, err
	}
	pages := make([]filteredPage, 0, len(top))
	at := make(map[string]int, len(top))
	names := make([]string, 0, len(top))
	for _, r := range top {
		at[r.TopPage] = len(pages)
		names = append(names, r.TopPage)
		pages = append(pages, filteredPage{Page: r.TopPage, Filtered: r.Filtered, ByReason: map[string]uint64{}})
	}
	if len(pages) == 0 {
		return pages, nil
	}
	p["pages"] = store.ArrayParam(names)
	why, err := selectRows[queries.StatsFilteredReasonsRow](req.ctx, a, qFilteredWhy, p)
	if err != nil {
		return nil, err
	}
	for _, r := range why {
		if i, ok := at[r.Page]; ok {
			pages[i].ByReason[r.Reason] = r.Events
		}
	}
	return pages, nil
}

func sortedKeys(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
