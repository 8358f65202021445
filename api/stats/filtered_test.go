package stats_test

import (
	"encoding/json"
	"strconv"
	"time"
)

type filteredAnswer struct {
	From, To, Interval string
	Filtered           uint64
	ByReason           map[string]uint64 `json:"by_reason"`
	Buckets            []struct {
		T        string
		ByReason map[string]uint64 `json:"by_reason"`
	}
	TopPages []struct {
		Page     string
		Filtered uint64
		ByReason map[string]uint64 `json:"by_reason"`
	} `json:"top_pages"`
}

func testFiltered(f *fixture) {
	t := f.t
	loc := berlin(t)
	site := "berlin.example"
	reasons := func(page string, from, to time.Time) map[string]uint64 {
		p := rangeParams(site, from, to)
		p["page"] = page
		out := map[string]uint64{}
		for _, r := range f.rows("SELECT verdict, count() FROM views_raw WHERE site = {site:String} AND verdict != 'valid'"+
			" AND time >= {from:DateTime64(3)} AND time < {to:DateTime64(3)} AND ({page:String} = '' OR page = {page:String}) GROUP BY verdict", p) {
			n, _ := strconv.ParseUint(r[1], 10, 64)
			out[r[0]] = n
		}
		return out
	}
	same := func(what string, got, want map[string]uint64) {
		t.Helper()
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if string(gj) != string(wj) {
			t.Errorf("%s: %s, want %s", what, gj, wj)
		}
	}
	from, to := time.Date(2026, 3, 27, 0, 0, 0, 0, loc), time.Date(2026, 3, 31, 0, 0, 0, 0, loc)
	var got filteredAnswer
	f.getJSON("/v1/sites/berlin.example/stats/filtered?from=2026-03-27&to=2026-03-30", &got)
	if len(got.Buckets) != 4 || got.Interval != "day" || got.From != "2026-03-27T00:00:00+01:00" || got.To != "2026-03-31T00:00:00+02:00" {
		t.Fatalf("filtered: %d buckets %s %s–%s", len(got.Buckets), got.Interval, got.From, got.To)
	}
	for i, b := range got.Buckets {
		start := from.AddDate(0, 0, i)
		if b.T != start.Format(time.RFC3339) {
			t.Errorf("bucket %d at %s, want %s", i, b.T, start.Format(time.RFC3339))
		}
		same("bucket "+b.T, b.ByReason, reasons("", start, start.AddDate(0, 0, 1)))
	}
	all := reasons("", from, to)
	same("by_reason", got.ByReason, all)
	var sum uint64
	for _, n := range all {
		sum += n
	}
	if got.Filtered != sum || sum == 0 {
		t.Errorf("filtered %d, want %d", got.Filtered, sum)
	}
	// The top pages: the most rejected events, ties by page.
	p := rangeParams("berlin.example", from, to)
	top := f.rows("SELECT page, count() AS n FROM views_raw WHERE site = {site:String} AND verdict != 'valid'"+
		" AND time >= {from:DateTime64(3)} AND time < {to:DateTime64(3)} GROUP BY page ORDER BY n DESC, page LIMIT 10", p)
	if len(got.TopPages) != 10 {
		t.Fatalf("%d top pages, want 10", len(got.TopPages))
	}
	for i, r := range top {
		tp := got.TopPages[i]
		if tp.Page != r[0] || strconv.FormatUint(tp.Filtered, 10) != r[1] {
			t.Errorf("top page %d = %s %d, want %v", i, tp.Page, tp.Filtered, r)
		}
		same("top page "+r[0], tp.ByReason, reasons(r[0], from, to))
	}
	// Hours of one page.
	got = filteredAnswer{}
	f.getJSON("/v1/sites/berlin.example/stats/filtered?interval=hour&from=2026-03-29T00:00:00Z&to=2026-03-30T00:00:00Z&page=/", &got)
	if len(got.Buckets) != 24 || len(got.TopPages) != 1 || got.TopPages[0].Page != "/" {
		t.Fatalf("hours of /: %d buckets, top pages %+v", len(got.Buckets), got.TopPages)
	}
	start := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC)
	for i, b := range got.Buckets {
		h := start.Add(time.Duration(i) * time.Hour)
		same("hour "+b.T, b.ByReason, reasons("/", h, h.Add(time.Hour)))
	}
	same("page /", got.TopPages[0].ByReason, reasons("/", start, start.Add(24*time.Hour)))
	// A UTC site's days are read from the day rows, a page's from hours.
	site = "utc.example"
	for _, page := range []string{"", "/"} {
		got = filteredAnswer{}
		f.getJSON("/v1/sites/utc.example/stats/filtered?from=2026-03-27&to=2026-03-30&page="+page, &got)
		if len(got.Buckets) != 4 {
			t.Fatalf("utc days of %q: %d buckets, want 4", page, len(got.Buckets))
		}
		start := time.Date(2026, 3, 27, 0, 0, 0, 0, time.UTC)
		for i, b := range got.Buckets {
			d := start.AddDate(0, 0, i)
			same("utc day "+b.T+" of "+page, b.ByReason, reasons(page, d, d.AddDate(0, 0, 1)))
		}
	}
}
