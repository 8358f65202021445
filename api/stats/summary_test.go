package stats_test

import (
	"math"
	"strconv"
	"time"
)

type summary struct {
	Site, Page, From, To, Timezone string
	AsOf                           string `json:"as_of"`
	Views, Uniques, Filtered       uint64
	UniquesError                   float64           `json:"uniques_error"`
	FilteredByReason               map[string]uint64 `json:"filtered_by_reason"`
	Previous                       struct {
		From, To                 string
		Views, Uniques, Filtered uint64
	}
	Change struct{ Views, Uniques, Filtered *float64 }
}

func testSummary(f *fixture) {
	t := f.t
	check := func(path, site, page string, from, to time.Time) summary {
		t.Helper()
		var got summary
		f.getJSON(path, &got)
		views, uniques, filtered := f.rawCounts(site, page, from, to)
		if got.Views != views || got.Uniques != uniques || got.Filtered != filtered {
			t.Errorf("%s: views %d uniques %d filtered %d, want %d %d %d", path, got.Views, got.Uniques, got.Filtered, views, uniques, filtered)
		}
		wantErr := 0.0
		if page == "" && uniques >= 128 {
			wantErr = 0.0163
		}
		if views == 0 || got.UniquesError != wantErr {
			t.Errorf("%s: %d views, %d uniques, uniques_error %v, want %v", path, views, uniques, got.UniquesError, wantErr)
		}
		prevFrom := from.Add(-to.Sub(from))
		pv, pu, pf := f.rawCounts(site, page, prevFrom, from)
		if got.Previous.Views != pv || got.Previous.Uniques != pu || got.Previous.Filtered != pf {
			t.Errorf("%s: previous %+v, want %d %d %d", path, got.Previous, pv, pu, pf)
		}
		if got.Previous.From != prevFrom.In(got.loc(t)).Format(time.RFC3339) || got.Previous.To != got.From {
			t.Errorf("%s: previous period %s–%s", path, got.Previous.From, got.Previous.To)
		}
		wantChange := func(name string, c *float64, cur, prev uint64) {
			t.Helper()
			switch {
			case prev == 0 && c != nil:
				t.Errorf("%s: change.%s = %v with nothing before, want null", path, name, *c)
			case prev != 0 && (c == nil || math.Abs(*c-(float64(cur)-float64(prev))/float64(prev)) > 1e-12):
				t.Errorf("%s: change.%s = %v, want (%d-%d)/%d", path, name, c, cur, prev, prev)
			}
		}
		wantChange("views", got.Change.Views, views, pv)
		wantChange("uniques", got.Change.Uniques, uniques, pu)
		wantChange("filtered", got.Change.Filtered, filtered, pf)
		p := rangeParams(site, from, to)
		p["page"] = page
		reasons := f.rows("SELECT verdict, count() FROM views_raw WHERE site = {site:String} AND verdict != 'valid' AND time >= {from:DateTime64(3)} AND time < {to:DateTime64(3)} AND ({page:String} = '' OR page = {page:String}) GROUP BY verdict", p)
		if len(reasons) != len(got.FilteredByReason) || len(reasons) < 3 {
			t.Errorf("%s: by reason %v, want %v", path, got.FilteredByReason, reasons)
		}
		for _, r := range reasons {
			if u := got.FilteredByReason[r[0]]; itoa(u) != r[1] {
				t.Errorf("%s: %s = %d, want %s", path, r[0], u, r[1])
			}
		}
		if got.Site != site || got.Page != page || got.AsOf != f.now.In(got.loc(t)).Format(time.RFC3339) ||
			got.From != from.In(got.loc(t)).Format(time.RFC3339) || got.To != to.In(got.loc(t)).Format(time.RFC3339) {
			t.Errorf("%s: site %q page %q from %s to %s as_of %s", path, got.Site, got.Page, got.From, got.To, got.AsOf)
		}
		return got
	}
	utc := func(s string) time.Time { v, _ := time.Parse(time.RFC3339, s); return v }
	check("/v1/sites/utc.example/stats/summary?from=2026-03-25&to=2026-03-31", "utc.example", "",
		utc("2026-03-25T00:00:00Z"), utc("2026-04-01T00:00:00Z"))
	// A one-day range: no whole UTC day inside, hours only.
	check("/v1/sites/utc.example/stats/summary?from=2026-03-31T10:15:00Z&to=2026-04-01T01:45:00Z", "utc.example", "",
		utc("2026-03-31T10:00:00Z"), utc("2026-04-01T02:00:00Z"))
	// Berlin: local days, the 23-hour one inside; whole UTC days from the
	// day rows and the 23:00/22:00 UTC edges from hours.
	loc := berlin(t)
	got := check("/v1/sites/berlin.example/stats/summary?from=2026-03-27&to=2026-03-29", "berlin.example", "",
		time.Date(2026, 3, 27, 0, 0, 0, 0, loc), time.Date(2026, 3, 30, 0, 0, 0, 0, loc))
	if got.Timezone != "Europe/Berlin" || got.From != "2026-03-27T00:00:00+01:00" || got.To != "2026-03-30T00:00:00+02:00" {
		t.Errorf("Berlin: %s %s–%s", got.Timezone, got.From, got.To)
	}
	// A page filter (normalised as /count does).
	check("/v1/sites/berlin.example/stats/summary?from=2026-03-24&to=2026-04-01&page=/posts/1/", "berlin.example", "/posts/1",
		time.Date(2026, 3, 24, 0, 0, 0, 0, loc), time.Date(2026, 4, 2, 0, 0, 0, 0, loc))
	// The default: 30 days ending now, widened to whole hours: everything.
	var all summary
	f.getJSON("/v1/sites/utc.example/stats/summary", &all)
	if want := f.tot.Sites["utc.example"]; all.Views != uint64(want.Valid) || all.From != "2026-03-03T10:00:00Z" || all.To != "2026-04-02T11:00:00Z" {
		t.Errorf("default range: %d views %s–%s, want %d", all.Views, all.From, all.To, want.Valid)
	}
	var sum uint64
	for _, n := range f.tot.Sites["utc.example"].DayUniques {
		sum += uint64(n)
	}
	// Ids rotate daily: the distinct ids of the range are the sum of each
	// day's; the sketch is within its error of it.
	if d := float64(all.Uniques) - float64(sum); d > 0.03*float64(sum) || d < -0.03*float64(sum) || all.UniquesError != 0.0163 {
		t.Errorf("default range: %d uniques (error %v), want %d ± 3 %%", all.Uniques, all.UniquesError, sum)
	}
}

func (s summary) loc(t interface{ Fatal(...any) }) *time.Location {
	if s.Timezone == "UTC" {
		return time.UTC
	}
	loc, err := time.LoadLocation(s.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }
