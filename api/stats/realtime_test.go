package stats_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
)

func testRealtime(f *fixture) {
	t := f.t
	var got struct {
		From, To     string
		Views5m      uint64  `json:"views_5m"`
		VisitorsNow  uint64  `json:"visitors_now"`
		LagSeconds   float64 `json:"lag_seconds"`
		UniquesError float64 `json:"uniques_error"`
	}
	f.getJSON("/v1/sites/utc.example/stats/realtime", &got)
	// now is 10:31:30: the minutes from 10:27 on.
	views, uniques, _ := f.rawCounts("utc.example", "", time.Date(2026, 4, 2, 10, 27, 0, 0, time.UTC), f.now)
	if got.Views5m != views || got.VisitorsNow != uniques || views == 0 || got.LagSeconds != 1.5 || got.From != "2026-04-02T10:27:00Z" {
		t.Errorf("realtime %+v, want %d views %d visitors lag 1.5", got, views, uniques)
	}
}

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
	reasons := func(page string, from, to time.Time) map[string]uint64 {
		p := rangeParams("berlin.example", from, to)
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
}

func testCSV(f *fixture) {
	t := f.t
	// A hand-made view whose campaign a spreadsheet would run as a formula.
	row := viewcount.Verdict{Event: viewcount.Event{Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Site: "csv.example",
		Page: "/a", ID: "csv-1", Visitor: 1, UTM: viewcount.UTM{Campaign: "=HYPERLINK(\"x\")"}}, Reason: viewcount.Valid, Seq: 1}
	if err := f.store.InsertViews(t.Context(), "csv-1", []viewcount.Verdict{row}); err != nil {
		t.Fatal(err)
	}
	check := func(path string, want string, header ...string) {
		t.Helper()
		code, body := f.get(path, header...)
		if code != 200 || body != want {
			t.Errorf("GET %s = %d\n%s\nwant\n%s", path, code, body, want)
		}
	}
	check("/v1/sites/csv.example/stats/breakdown?from=2026-03-01&to=2026-03-01&by=utm_campaign&format=csv",
		"utm_campaign,views,uniques\n\"'=HYPERLINK(\"\"x\"\")\",1,1\n")
	check("/v1/sites/csv.example/stats/timeseries?from=2026-03-01T10:00:00Z&to=2026-03-01T13:00:00Z&interval=hour",
		"t,views,uniques\n2026-03-01T10:00:00Z,0,0\n2026-03-01T11:00:00Z,0,0\n2026-03-01T12:00:00Z,1,1\n", "Accept", "text/csv")
	check("/v1/sites/csv.example/stats/summary?from=2026-03-01&to=2026-03-01&format=csv",
		"from,to,views,uniques,uniques_error,filtered,previous_from,previous_to,previous_views,previous_uniques,previous_filtered\n"+
			"2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,1,1,0,0,2026-02-28T00:00:00Z,2026-03-01T00:00:00Z,0,0,0\n")
	check("/v1/sites/csv.example/stats/realtime?format=csv", "views_5m,visitors_now,lag_seconds\n0,0,1.5\n")
	// Every endpoint's CSV is a header and rows of the same width.
	for _, e := range []string{"summary", "timeseries", "breakdown?by=source", "realtime", "filtered"} {
		sep := "?"
		if strings.Contains(e, "?") {
			sep = "&"
		}
		code, body := f.get("/v1/sites/berlin.example/stats/" + e + sep + "format=csv")
		lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
		if code != 200 || len(lines) < 2 {
			t.Errorf("%s: %d %q", e, code, body)
			continue
		}
		for _, l := range lines[1:] {
			if strings.Count(l, ",") != strings.Count(lines[0], ",") {
				t.Errorf("%s: row %q under header %q", e, l, lines[0])
			}
		}
	}
}
