package stats_test

import (
	"strconv"
	"time"
)

type breakdown struct {
	From, To     string
	By           string
	UniquesError float64 `json:"uniques_error"`
	Rows         []struct {
		Value          string
		Views, Uniques uint64
	}
	TotalValues   uint64 `json:"total_values"`
	Limit, Offset int
}

func testBreakdown(f *fixture) {
	t := f.t
	loc := berlin(t)
	from, to := time.Date(2026, 3, 24, 0, 0, 0, 0, loc), time.Date(2026, 4, 1, 0, 0, 0, 0, loc)
	column := map[string]string{"page": "page", "source": "ref_source", "referrer": "ref_host", "utm_source": "utm_source",
		"utm_medium": "utm_medium", "utm_campaign": "utm_campaign", "browser": "browser", "os": "os", "device": "device",
		"country": "country", "screen": "screen"}
	// The name of the value stored as '', by dimension.
	empty := map[string]string{"referrer": "(direct)", "utm_source": "(none)", "utm_medium": "(none)", "utm_campaign": "(none)"}
	emptyName := func(by string) string {
		if e, ok := empty[by]; ok {
			return e
		}
		return "(unknown)"
	}
	// want is the direct count: views and distinct visitors per value,
	// sorted as the API sorts (views, then the stored value); distinct
	// visitors as rawCounts says: exact for a page (by page, or any
	// breakdown of one page) below 4096 views, else dim_rollup's sketch.
	want := func(by, page string) [][]string {
		p := rangeParams("berlin.example", from, to)
		p["col"], p["page"], p["empty"] = column[by], page, emptyName(by)
		p["exact"] = strconv.FormatBool(by == "page" || page != "")
		return f.rows("SELECT if({col:Identifier} = '', {empty:String}, toString({col:Identifier})) AS v, count() AS n,"+
			" least(n, if({exact:Bool} AND n < 4096, uniqExact(visitor), uniqCombined64(12)(visitor))) FROM views_raw"+
			" WHERE site = {site:String} AND verdict = 'valid' AND time >= {from:DateTime64(3)} AND time < {to:DateTime64(3)}"+
			" AND ({page:String} = '' OR page = {page:String}) GROUP BY {col:Identifier} ORDER BY n DESC, {col:Identifier}", p)
	}
	check := func(path string, want [][]string, total int) breakdown {
		t.Helper()
		var got breakdown
		f.getJSON(path, &got)
		if len(got.Rows) != len(want) || int(got.TotalValues) != total {
			t.Fatalf("%s: %d rows of %d values, want %d of %d: %+v", path, len(got.Rows), got.TotalValues, len(want), total, got.Rows)
		}
		for i, r := range got.Rows {
			if r.Value != want[i][0] || strconv.FormatUint(r.Views, 10) != want[i][1] || strconv.FormatUint(r.Uniques, 10) != want[i][2] {
				t.Errorf("%s: row %d = %+v, want %v", path, i, r, want[i])
			}
		}
		return got
	}
	const base = "/v1/sites/berlin.example/stats/breakdown?from=2026-03-24&to=2026-03-31&limit=1000&by="
	for by := range column {
		w := want(by, "")
		if len(w) < 3 {
			t.Errorf("by %s: only %d values in the history", by, len(w))
		}
		got := check(base+by, w, len(w))
		if got.By != by || got.Limit != 1000 || got.Offset != 0 {
			t.Errorf("by %s: by %q limit %d offset %d", by, got.By, got.Limit, got.Offset)
		}
	}
	// Unknown values: pixel views have no screen class, some countries are not known.
	var screens breakdown
	f.getJSON(base+"screen", &screens)
	found := false
	for _, r := range screens.Rows {
		found = found || r.Value == "(unknown)"
	}
	if !found {
		t.Errorf("screen: no (unknown) row: %+v", screens.Rows)
	}
	// The page breakdown of one page: its own row.
	w := want("page", "/posts/2")
	check(base+"page&page=/posts/2", w, 1)
	// Breakdowns of one page (page_views, migration 011), every dimension, over a
	// range whose edges are Berlin's (hour rows) across its change to
	// summer time; a popular page and a quiet one.
	for _, page := range []string{"/posts/2", "/"} {
		for by := range column {
			if by == "page" {
				continue
			}
			w := want(by, page)
			if len(w) < 2 {
				t.Errorf("page %s by %s: only %d values in the history", page, by, len(w))
			}
			check(base+by+"&page="+page, w, len(w))
		}
	}
	// Summed over every page, a page's breakdowns are the site's: the
	// history's own counts, over all of it (the default range).
	tot := f.tot.Sites["utc.example"]
	for by := range column {
		if by == "page" {
			continue
		}
		sum := map[string]uint64{}
		for page := range tot.PageDay {
			var got breakdown
			f.getJSON("/v1/sites/utc.example/stats/breakdown?limit=1000&by="+by+"&page="+page, &got)
			for _, r := range got.Rows {
				sum[r.Value] += r.Views
			}
		}
		if len(sum) != len(tot.Dims[by]) {
			t.Errorf("by %s over all pages: %d values, want %d", by, len(sum), len(tot.Dims[by]))
		}
		for v, n := range tot.Dims[by] {
			if v == "" {
				v = emptyName(by)
			}
			if sum[v] != uint64(n) {
				t.Errorf("by %s over all pages: %s = %d views, want %d", by, v, sum[v], n)
			}
		}
	}
	// The site's pages over the whole history, a range reaching past now:
	// its last day is read from the day rows (liveParams).
	wfrom, wto := time.Date(2026, 3, 23, 0, 0, 0, 0, time.UTC), time.Date(2026, 4, 3, 0, 0, 0, 0, time.UTC) // to= is inclusive
	wp := rangeParams("utc.example", wfrom, wto)
	wantPages := f.rows("SELECT page, count() AS n, least(n, if(n < 4096, uniqExact(visitor), uniqCombined64(12)(visitor))) FROM views_raw WHERE site = {site:String}"+
		" AND verdict = 'valid' AND time >= {from:DateTime64(3)} AND time < {to:DateTime64(3)} GROUP BY page ORDER BY n DESC, page", wp)
	check("/v1/sites/utc.example/stats/breakdown?from=2026-03-23&to=2026-04-02&limit=1000&by=page", wantPages, len(wantPages))
	// A page of the ranking: limit and offset; total_values counts all.
	all := want("source", "")
	got := check("/v1/sites/berlin.example/stats/breakdown?from=2026-03-24&to=2026-03-31&by=source&limit=3&offset=2", all[2:5], len(all))
	if got.Limit != 3 || got.Offset != 2 {
		t.Errorf("limit %d offset %d", got.Limit, got.Offset)
	}
	// The default limit, and past the end.
	check("/v1/sites/berlin.example/stats/breakdown?from=2026-03-24&to=2026-03-31&by=page", want("page", "")[:10], len(want("page", "")))
	check("/v1/sites/berlin.example/stats/breakdown?from=2026-03-24&to=2026-03-31&by=source&offset=500", nil, len(all))
}
