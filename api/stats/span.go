package stats

import (
	"strconv"
	"time"

	"github.com/viewcount/viewcount/sql/store"
)

// Range caps, by what a range is counted in: a minute timeseries covers at
// most a day (1440 buckets), an hour timeseries a week (168), and anything
// counted in days (day timeseries, summary, breakdown, filtered) 400 days,
// a year and a month of comparisons.
const (
	maxMinuteRange = 24 * time.Hour
	maxHourRange   = 7 * 24 * time.Hour
	maxDayRange    = 400 * 24 * time.Hour
	defaultRange   = 30 * 24 * time.Hour
)

var (
	epoch = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	// The store's DateTime ends in 2106; nothing is counted this far ahead.
	latest = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
)

// span is a range [from, to) as counted: aligned to whole hours (or
// minutes for a minute timeseries), UTC.
type span struct{ from, to time.Time }

// parseRange reads the from and to parameters: a date (YYYY-MM-DD in the
// site's zone; to includes its whole day) or an RFC 3339 time. The default
// is the limit's worth (at most 30 days) ending now.
func parseRange(req *request, limit time.Duration) (from, to time.Time, err error) {
	return parseBounds(req, "from", "to", limit, true)
}

// parseCompare reads compare_from and compare_to, the period a summary or
// a breakdown compares with (as from and to; default the period before:
// ok false).
func parseCompare(req *request) (s span, ok bool, err error) {
	if req.get("compare_from") == "" && req.get("compare_to") == "" {
		return span{}, false, nil
	}
	from, to, err := parseBounds(req, "compare_from", "compare_to", maxDayRange, false)
	return hourSpan(from, to), err == nil, err
}

// parseBounds reads a range from the parameters fromName and toName;
// without defaults, both are required.
func parseBounds(req *request, fromName, toName string, limit time.Duration, defaults bool) (from, to time.Time, err error) {
	parse := func(name string, end bool) (time.Time, bool, error) {
		v := req.get(name)
		if v == "" {
			if !defaults {
				return time.Time{}, false, badParam(name, "required with %s and %s", fromName, toName)
			}
			return time.Time{}, false, nil
		}
		if d, err := time.ParseInLocation(time.DateOnly, v, req.loc); err == nil {
			if end {
				d = d.AddDate(0, 0, 1)
			}
			return d.UTC(), true, nil
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return time.Time{}, false, badParam(name, "want YYYY-MM-DD or an RFC 3339 time")
		}
		return t.UTC(), true, nil
	}
	to, toSet, err := parse(toName, true)
	if err != nil {
		return
	}
	if !toSet {
		to = req.now
	}
	from, fromSet, err := parse(fromName, false)
	if err != nil {
		return
	}
	if !fromSet {
		from = to.Add(-min(defaultRange, limit))
	}
	switch {
	case from.Before(epoch):
		err = badParam(fromName, "before 1970-01-01")
	case to.After(latest):
		err = badParam(toName, "after 2100-01-01")
	case !from.Before(to):
		err = badParam(fromName, "not before %s", toName)
	case to.Sub(from) > limit:
		err = badParam(toName, "the range is longer than %s (the cap for this interval)", capText(limit))
	}
	return
}

func capText(d time.Duration) string {
	if d >= 48*time.Hour {
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	}
	return strconv.Itoa(int(d/time.Hour)) + " hours"
}

func floor(t time.Time, d time.Duration) time.Time { return t.Truncate(d) }

func ceil(t time.Time, d time.Duration) time.Time {
	if f := t.Truncate(d); f.Before(t) {
		return f.Add(d)
	}
	return t
}

// hourSpan widens [from, to) to whole UTC hours (the finest grain every
// rollup row has).
func hourSpan(from, to time.Time) span {
	return span{floor(from, time.Hour), ceil(to, time.Hour)}
}

// localDay is the start of the day holding t in loc.
func localDay(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, loc)
}

func nextDay(t time.Time, loc *time.Location) time.Time {
	y, m, d := t.In(loc).Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, loc)
}

// params are the four bounds the range queries read: [dfrom, dto) the
// whole UTC days inside the span (day rows), the rest its hours.
func (s span) params(site string) store.Params {
	dfrom, dto := ceil(s.from, 24*time.Hour), floor(s.to, 24*time.Hour)
	if !dfrom.Before(dto) {
		dfrom, dto = s.from, s.from
	}
	return store.Params{"site": site, "from": dbTime(s.from), "to": dbTime(s.to), "dfrom": dbTime(dfrom), "dto": dbTime(dto)}
}

// liveParams are params for a span that reaches past now, whose last day
// is read from its day row instead of its hours: nothing is stored after
// now, so the day row holds exactly that day's hours up to now. A site's
// breakdown reads every value's edge hours (hour rows are ordered by time,
// not value): the end of a range reaching today was every page's hour
// sketches of today (BenchmarkStats;
// docs/benchmarks/history/issue-10-session-3.md, "Stats API latency: live
// ranges"). A span ending before now, or lying within one day, keeps its
// hours.
func (s span) liveParams(site string, now time.Time) store.Params {
	p := s.params(site)
	if !s.to.After(now) {
		return p
	}
	dfrom, end := ceil(s.from, 24*time.Hour), ceil(s.to, 24*time.Hour)
	if !dfrom.Before(end) {
		return p
	}
	p["dfrom"], p["dto"], p["to"] = dbTime(dfrom), dbTime(end), dbTime(end)
	return p
}

// periodParams are the bounds of cur and of prev (p-prefixed) for the
// queries that read a range and the period before it. A zero prev reads
// nothing. hoursOnly is for rows kept in hours only (a page's reasons):
// no day rows, every hour of the span.
func periodParams(site string, cur, prev span, hoursOnly bool) store.Params {
	p := cur.params(site)
	if prev.from.IsZero() {
		prev = span{cur.from, cur.from}
	}
	pp := prev.params(site)
	for _, k := range []string{"from", "to", "dfrom", "dto"} {
		p["p"+k] = pp[k]
	}
	if hoursOnly {
		p["dfrom"], p["dto"] = p["from"], p["from"]
		p["pdfrom"], p["pdto"] = p["pfrom"], p["pfrom"]
	}
	return p
}

// previous is the span of the same length just before s.
func (s span) previous() span { return span{s.from.Add(-s.to.Sub(s.from)), s.from} }

func dbTime(t time.Time) string { return t.UTC().Format(time.DateTime) }

// interval is a timeseries bucket size.
type interval string

const (
	minute interval = "minute"
	hour   interval = "hour"
	day    interval = "day"
)

func parseInterval(req *request, allowed ...interval) (interval, error) {
	v := interval(req.get("interval"))
	if v == "" {
		return day, nil
	}
	for _, a := range allowed {
		if v == a {
			return v, nil
		}
	}
	names := ""
	for i, a := range allowed {
		if i > 0 {
			names += ", "
		}
		names += string(a)
	}
	return "", badParam("interval", "want one of %s", names)
}

func (iv interval) limit() time.Duration {
	switch iv {
	case minute:
		return maxMinuteRange
	case hour:
		return maxHourRange
	}
	return maxDayRange
}

// buckets returns the starts of iv's buckets covering [from, to) in loc
// (day buckets are local days), and the span to read: from the first
// bucket's start to the last one's end, widened to whole hours (minutes
// for minute buckets).
func buckets(iv interval, from, to time.Time, loc *time.Location) ([]time.Time, span) {
	var out []time.Time
	switch iv {
	case minute, hour:
		d := time.Minute
		if iv == hour {
			d = time.Hour
		}
		end := ceil(to, d)
		for t := floor(from, d); t.Before(end); t = t.Add(d) {
			out = append(out, t)
		}
		return out, span{out[0], end}
	}
	t := localDay(from, loc)
	for ; t.Before(to); t = nextDay(t, loc) {
		out = append(out, t.UTC())
	}
	return out, hourSpan(out[0], t.UTC())
}
