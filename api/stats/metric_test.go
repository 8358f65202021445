package stats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount/api/stats"
)

// metricSeries answers a timeseries of a metric, which must succeed, as
// its buckets' starts and values (nil for null).
func (f *fixture) metricSeries(path string) (ts []string, vs []*float64, engagedAfter *float64) {
	f.t.Helper()
	var got struct {
		Interval, Metric string
		EngagedAfter     *float64 `json:"engaged_after"`
		Buckets          []map[string]json.RawMessage
	}
	f.getJSON(path, &got)
	for _, b := range got.Buckets {
		var t string
		var v *float64
		if len(b) != 2 || json.Unmarshal(b["t"], &t) != nil || json.Unmarshal(b[got.Metric], &v) != nil {
			f.t.Fatalf("GET %s: bucket %v, want t and %s", path, b, got.Metric)
		}
		ts, vs = append(ts, t), append(vs, v)
	}
	return ts, vs, got.EngagedAfter
}

func show(vs []*float64) string {
	var b strings.Builder
	for i, v := range vs {
		if i > 0 {
			b.WriteByte(' ')
		}
		if v == nil {
			b.WriteString("null")
		} else {
			fmt.Fprintf(&b, "%g", *v)
		}
	}
	return b.String()
}

// x is a metric's expected value; none is null.
func x(v float64) *float64 { return &v }

var none *float64

func sameValues(got, want []*float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if (got[i] == nil) != (want[i] == nil) || got[i] != nil && !near(got[i], *want[i]) {
			return false
		}
	}
	return true
}

// TestTimeseriesMetrics: every metric's series over the hand-written day
// (engagementHistory), exactly, per hour and per day, of the site and of
// a page, and in CSV; views stay what they were; a minute interval and an
// unknown metric are refused.
func TestTimeseriesMetrics(t *testing.T) {
	f := newEngagementFixture(t)
	const base = "/v1/sites/eng.example/stats/timeseries?"
	// Hours 09 to 13 of 2026-11-10. Visit A (10:00: /a 15 s engaged, 60 %
	// down; /b 4 s, 100 %; 330 s long), visit B (11:00: /a 3 s, 20 %, 5 s
	// long, a bounce), visit C (12:00: /c, never reported, a bounce) and a
	// bot (13:00: nothing counts). Medians of two views: half way is the
	// top of the first one's bucket ([4 s, 5 s): 5 s; [60, 65) %: 65);
	// of one: the middle of its bucket.
	hours := "interval=hour&from=2026-11-10T09:00:00Z&to=2026-11-10T14:00:00Z"
	for _, c := range []struct {
		metric string
		want   []*float64
	}{
		{"visits", []*float64{x(0), x(1), x(1), x(1), x(0)}},
		{"bounce_rate", []*float64{none, x(0), x(1), x(1), none}},
		{"visit_duration", []*float64{none, x(330), x(5), x(0), none}},
		{"engaged_views", []*float64{x(0), x(1), x(0), x(0), x(0)}},
		{"time_on_page", []*float64{none, x(5), x(3.5), none, none}},
		{"scroll_depth", []*float64{none, x(65), x(22.5), none, none}},
	} {
		ts, got, _ := f.metricSeries(base + hours + "&metric=" + c.metric)
		if len(ts) != 5 || ts[0] != "2026-11-10T09:00:00Z" || ts[4] != "2026-11-10T13:00:00Z" || !sameValues(got, c.want) {
			t.Errorf("%s per hour: %q %s, want %s", c.metric, ts, show(got), show(c.want))
		}
	}
	// Days 9 to 11: the day's figures are the summary's
	// (TestEngagementSummary); the days around it have none.
	days := "interval=day&from=2026-11-09&to=2026-11-11"
	for _, c := range []struct {
		metric string
		want   []*float64
	}{
		{"visits", []*float64{x(0), x(3), x(0)}},
		{"bounce_rate", []*float64{none, x(2.0 / 3), none}},
		{"visit_duration", []*float64{none, x(335.0 / 3), none}},
		{"engaged_views", []*float64{x(0), x(1), x(0)}},
		{"time_on_page", []*float64{none, x(4.5), none}},
		{"scroll_depth", []*float64{none, x(62.5), none}},
	} {
		ts, got, after := f.metricSeries(base + days + "&metric=" + c.metric)
		if len(ts) != 3 || ts[1] != "2026-11-10T00:00:00Z" || !sameValues(got, c.want) {
			t.Errorf("%s per day: %q %s, want %s", c.metric, ts, show(got), show(c.want))
		}
		if (c.metric == "engaged_views") != (after != nil) || after != nil && *after != 10 {
			t.Errorf("%s per day: engaged_after %v, want 10 with engaged_views only", c.metric, after)
		}
	}
	// A page: its views' engagement (/a: 15 and 3 s, 60 and 20 %) and the
	// visits that entered on it (A and B).
	for _, c := range []struct {
		metric string
		want   *float64
	}{
		{"visits", x(2)}, {"bounce_rate", x(0.5)}, {"visit_duration", x(167.5)},
		{"engaged_views", x(1)}, {"time_on_page", x(4)}, {"scroll_depth", x(25)},
	} {
		_, got, _ := f.metricSeries(base + "interval=day&from=2026-11-10&to=2026-11-10&page=/a&metric=" + c.metric)
		if !sameValues(got, []*float64{c.want}) {
			t.Errorf("%s of /a: %s, want %s", c.metric, show(got), show([]*float64{c.want}))
		}
	}

	// CSV: t and the metric, an empty cell for null.
	if code, body := f.get(base + days + "&metric=bounce_rate&format=csv"); code != http.StatusOK ||
		body != "t,bounce_rate\n2026-11-09T00:00:00Z,\n2026-11-10T00:00:00Z,0.6666666666666666\n2026-11-11T00:00:00Z,\n" {
		t.Errorf("CSV: %d\n%s", code, body)
	}
	// The JSON as documented (docs/stats-api.md).
	if code, body := f.get(base + "interval=day&from=2026-11-10&to=2026-11-10&metric=visits"); code != http.StatusOK ||
		!strings.HasSuffix(body, `"interval":"day","metric":"visits","buckets":[{"t":"2026-11-10T00:00:00Z","visits":3}]}`) {
		t.Errorf("visits JSON: %d %s", code, body)
	}

	// Views: metric=views is the answer without a metric, byte for byte.
	for _, q := range []string{hours, days, "interval=minute&from=2026-11-10T10:00:00Z&to=2026-11-10T10:10:00Z"} {
		code, plain := f.get(base + q)
		_, views := f.get(base + q + "&metric=views")
		if code != http.StatusOK || views != plain || !strings.Contains(plain, `"uniques_error"`) || strings.Contains(plain, `"metric"`) {
			t.Errorf("%s: metric=views answers\n%s\nwithout a metric (%d)\n%s", q, views, code, plain)
		}
	}

	// Refused: minutes of an engagement metric, an unknown metric.
	for _, c := range []struct{ q, want string }{
		{"interval=minute&from=2026-11-10T10:00:00Z&to=2026-11-10T11:00:00Z&metric=visits",
			`{"error":"interval: minute buckets count views only; metric=visits is kept per hour and day: want hour or day"}`},
		{"interval=minute&metric=scroll_depth",
			`{"error":"interval: minute buckets count views only; metric=scroll_depth is kept per hour and day: want hour or day"}`},
		{"metric=uniques",
			`{"error":"metric: want one of views, visits, bounce_rate, visit_duration, engaged_views, time_on_page, scroll_depth"}`},
	} {
		if code, body := f.get(base + c.q); code != http.StatusBadRequest || body != c.want {
			t.Errorf("%s: %d %s, want 400 %s", c.q, code, body, c.want)
		}
	}
}

// TestTimeseriesMetricCache: a cached answer is the site's engaged_after's:
// once the site counts engaged views from 3 s instead of 10, the same
// request reads the new count, and back at 10 s the first answer again.
func TestTimeseriesMetricCache(t *testing.T) {
	var after atomic.Int64
	after.Store(int64(10 * time.Second))
	f := newEngagementFixture(t, func(c *stats.Config) {
		c.CacheBytes = 1 << 20
		c.EngagedAfter = func(context.Context, string) (time.Duration, error) { return time.Duration(after.Load()), nil }
	})
	const path = "/v1/sites/eng.example/stats/timeseries?interval=hour&from=2026-11-10T10:00:00Z&to=2026-11-10T12:00:00Z&metric=engaged_views"
	check := func(wantAfter float64, want ...*float64) {
		t.Helper()
		_, got, a := f.metricSeries(path)
		if !sameValues(got, want) || a == nil || *a != wantAfter {
			t.Errorf("engaged_after %gs: %s (engaged_after %v), want %s", wantAfter, show(got), a, show(want))
		}
	}
	check(10, x(1), x(0))
	after.Store(int64(3 * time.Second)) // 15 and 4 s at 10:00, 3 s at 11:00
	check(3, x(2), x(1))
	after.Store(int64(10 * time.Second))
	check(10, x(1), x(0))
	// The summary's engaged views follow it too.
	var sum struct {
		EngagedViews uint64  `json:"engaged_views"`
		EngagedAfter float64 `json:"engaged_after"`
	}
	f.getJSON("/v1/sites/eng.example/stats/summary?from=2026-11-10&to=2026-11-10", &sum)
	after.Store(int64(3 * time.Second))
	f.getJSON("/v1/sites/eng.example/stats/summary?from=2026-11-10&to=2026-11-10", &sum)
	if sum.EngagedViews != 3 || sum.EngagedAfter != 3 {
		t.Errorf("summary after engaged_after 3 s: %+v, want 3 engaged views", sum)
	}
}
