package stats_test

import (
	"time"
)

type series struct {
	From, To, Timezone, Interval string
	UniquesError                 float64 `json:"uniques_error"`
	Buckets                      []struct {
		T              string
		Views, Uniques uint64
	}
}

func testTimeseries(f *fixture) {
	t := f.t
	// check compares every bucket with a direct count over its span; next
	// gives a bucket's end from its start.
	check := func(path, site, page string, loc *time.Location, first time.Time, n int, next func(time.Time) time.Time) series {
		t.Helper()
		var got series
		f.getJSON(path, &got)
		if len(got.Buckets) != n {
			t.Fatalf("%s: %d buckets, want %d", path, len(got.Buckets), n)
		}
		start := first
		var nonzero int
		for _, b := range got.Buckets {
			end := next(start)
			views, uniques, _ := f.rawCounts(site, page, start, end)
			if b.T != start.In(loc).Format(time.RFC3339) || b.Views != views || b.Uniques != uniques {
				t.Errorf("%s: bucket %s %d/%d, want %s %d/%d", path, b.T, b.Views, b.Uniques, start.In(loc).Format(time.RFC3339), views, uniques)
			}
			if views > 0 {
				nonzero++
			}
			start = end
		}
		if nonzero == 0 {
			t.Errorf("%s: every bucket empty", path)
		}
		if got.From != first.In(loc).Format(time.RFC3339) || got.To != start.In(loc).Format(time.RFC3339) {
			t.Errorf("%s: range %s–%s", path, got.From, got.To)
		}
		return got
	}
	loc := berlin(t)
	localDay := func(t time.Time) time.Time {
		y, m, d := t.In(loc).Date()
		return time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	}
	// Local days across the change to summer time: 24, 24, 23, 24 hours.
	got := check("/v1/sites/berlin.example/stats/timeseries?interval=day&from=2026-03-27&to=2026-03-30", "berlin.example", "", loc,
		time.Date(2026, 3, 27, 0, 0, 0, 0, loc), 4, localDay)
	if got.Buckets[2].T != "2026-03-29T00:00:00+01:00" || got.Buckets[3].T != "2026-03-30T00:00:00+02:00" || got.Interval != "day" {
		t.Errorf("DST days: %+v", got.Buckets)
	}
	// The same with a page filter (page_rollup's hours).
	check("/v1/sites/berlin.example/stats/timeseries?from=2026-03-27&to=2026-03-30&page=/", "berlin.example", "/", loc,
		time.Date(2026, 3, 27, 0, 0, 0, 0, loc), 4, localDay)
	// Days before the history began are zeros, present.
	utcDay := func(t time.Time) time.Time { return t.Add(24 * time.Hour) }
	got = check("/v1/sites/utc.example/stats/timeseries?interval=day&from=2026-03-20&to=2026-03-24", "utc.example", "", time.UTC,
		time.Date(2026, 3, 20, 0, 0, 0, 0, time.UTC), 5, utcDay)
	if got.Buckets[0].Views != 0 || got.Buckets[2].Views != 0 || got.Buckets[3].Views == 0 {
		t.Errorf("empty days: %+v", got.Buckets)
	}
	// Hours, of one page, from an RFC 3339 range widened to whole hours.
	check("/v1/sites/utc.example/stats/timeseries?interval=hour&from=2026-03-31T22:10:00Z&to=2026-04-01T01:30:00Z&page=/", "utc.example", "/", time.UTC,
		time.Date(2026, 3, 31, 22, 0, 0, 0, time.UTC), 4, func(t time.Time) time.Time { return t.Add(time.Hour) })
	// Minutes, across the end of the history (empty minutes after it).
	minute := func(t time.Time) time.Time { return t.Add(time.Minute) }
	got = check("/v1/sites/utc.example/stats/timeseries?interval=minute&from=2026-04-02T10:20:00Z&to=2026-04-02T10:40:00Z", "utc.example", "", time.UTC,
		time.Date(2026, 4, 2, 10, 20, 0, 0, time.UTC), 20, minute)
	if got.Buckets[12].Views != 0 || got.Buckets[19].Views != 0 {
		t.Errorf("minutes after the history: %+v", got.Buckets[10:])
	}
	check("/v1/sites/berlin.example/stats/timeseries?interval=minute&from=2026-04-02T09:00:00Z&to=2026-04-02T10:00:00Z&page=/", "berlin.example", "/", loc,
		time.Date(2026, 4, 2, 9, 0, 0, 0, time.UTC), 60, minute)
}
