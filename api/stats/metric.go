package stats

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
)

const qEngagementSeries = "stats_engagement_series" // site, grain, from, to, daily, tz, edim, evalue, vdim, vvalue → t, part, key, n

// metric is what a timeseries counts per bucket (docs/stats-api.md,
// "Metrics"): views and uniques from the view rollups, or one of the
// summary's engagement figures from engagement_rollup.
type metric string

const (
	metricViews         metric = "views"
	metricVisits        metric = "visits"
	metricBounceRate    metric = "bounce_rate"
	metricVisitDuration metric = "visit_duration"
	metricEngagedViews  metric = "engaged_views"
	metricTimeOnPage    metric = "time_on_page"
	metricScrollDepth   metric = "scroll_depth"
)

var metrics = []metric{metricViews, metricVisits, metricBounceRate, metricVisitDuration, metricEngagedViews, metricTimeOnPage, metricScrollDepth}

// parseMetric reads the metric parameter; default views.
func parseMetric(req *request) (metric, error) {
	v := metric(req.get("metric"))
	if v == "" {
		return metricViews, nil
	}
	names := make([]string, len(metrics))
	for i, m := range metrics {
		if v == m {
			return m, nil
		}
		names[i] = string(m)
	}
	return "", badParam("metric", "want one of %s", strings.Join(names, ", "))
}

// of is the metric's figure in a bucket's engagement: null where it has
// nothing to be measured on (no visit, no engagement report), as in the
// summary.
func (m metric) of(j engagementJSON) *float64 {
	n := func(x uint64) *float64 { f := float64(x); return &f }
	switch m {
	case metricVisits:
		return n(j.Visits)
	case metricBounceRate:
		return j.BounceRate
	case metricVisitDuration:
		return j.VisitDuration
	case metricEngagedViews:
		return n(j.EngagedViews)
	case metricTimeOnPage:
		return j.TimeOnPage
	case metricScrollDepth:
		return j.ScrollDepth
	}
	return nil
}

// metricBucket is a bucket of a metric's series: {"t":…,"<metric>":x}, x
// null where the figure has nothing to be measured on.
type metricBucket struct {
	T      string
	metric metric
	Value  *float64
}

func (b metricBucket) MarshalJSON() ([]byte, error) {
	t, err := json.Marshal(b.T)
	if err != nil {
		return nil, err
	}
	v, err := json.Marshal(b.Value)
	if err != nil {
		return nil, err
	}
	return fmt.Appendf(nil, `{"t":%s,"%s":%s}`, t, b.metric, v), nil
}

type metricSeriesJSON struct {
	meta
	Interval interval `json:"interval"`
	Metric   metric   `json:"metric"`
	// EngagedAfter (seconds) is the site's threshold an engaged_views
	// series counts from; absent for the other metrics.
	EngagedAfter *float64       `json:"engaged_after,omitempty"`
	Buckets      []metricBucket `json:"buckets"`
}

// metricSeries is a timeseries of one of the engagement metrics, from
// engagement_rollup's hours and days (it keeps no minutes, so a minute
// interval is refused). A page's series is its views' engagement and the
// visits that entered on it, as its summary.
func (a *API) metricSeries(req *request, m metric) (*answer, error) {
	iv, err := parseInterval(req, minute, hour, day)
	if err != nil {
		return nil, err
	}
	if iv == minute {
		return nil, badParam("interval", "minute buckets count views only; metric=%s is kept per hour and day: want hour or day", m)
	}
	from, to, err := parseRange(req, iv.limit())
	if err != nil {
		return nil, err
	}
	starts, s := buckets(iv, from, to, req.loc)
	grain, daily := seriesGrain(iv, req.loc, true)
	p := seriesParams(req.site, s, grain, daily, req.loc.String())
	name, ok := engagementRead(req, p, qEngagementSeries, qFilterEngagementSeries)
	if !ok {
		return nil, badParam("metric", "%s is kept per dimension: with filters on several dimensions only views are counted", m)
	}
	rows, err := selectRows[queries.StatsEngagementSeriesRow](req.ctx, a, name, p)
	if err != nil {
		return nil, err
	}
	after := viewcount.DefaultEngagedAfter
	if m == metricEngagedViews {
		if after, err = a.cfg.EngagedAfter(req.ctx, req.site); err != nil {
			return nil, err
		}
	}
	byT := make(map[int64]*engagement)
	for _, r := range rows {
		e := byT[int64(r.T)]
		if e == nil {
			e = &engagement{engaged: viewcount.Histogram{}, scroll: viewcount.Histogram{}}
			byT[int64(r.T)] = e
		}
		e.add(r.Part, r.Key, r.N)
	}
	out := metricSeriesJSON{meta: req.meta(span{starts[0], s.to}), Interval: iv, Metric: m, Buckets: make([]metricBucket, len(starts))}
	if m == metricEngagedViews {
		x := after.Seconds()
		out.EngagedAfter = &x
	}
	ans := &answer{header: []string{"t", string(m)}, rows: make([][]string, len(starts)), end: s.to}
	for i, t := range starts {
		e := byT[t.Unix()]
		if e == nil {
			e = &engagement{}
		}
		v := m.of(e.json(after))
		out.Buckets[i] = metricBucket{T: req.format(t), metric: m, Value: v}
		ans.rows[i] = []string{out.Buckets[i].T, opt(v)}
	}
	if iv == day {
		out.To = req.format(nextDay(starts[len(starts)-1], req.loc))
	}
	ans.json = out
	return ans, nil
}
