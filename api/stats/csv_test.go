package stats_test

import (
	"github.com/viewcount/viewcount/sql/store/storetest"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
)

func testCSV(f *fixture) {
	t := f.t
	// A hand-made view whose campaign a spreadsheet would run as a formula.
	row := viewcount.Verdict{Event: viewcount.Event{Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Site: "csv.example",
		Page: "/a", ID: "csv-1", Visitor: 1, UTM: viewcount.UTM{Campaign: "=HYPERLINK(\"x\")"}}, Reason: viewcount.Valid, Seq: 1}
	if err := storetest.InsertFed(t.Context(), f.store, "csv-1", []viewcount.Verdict{row}); err != nil {
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
		"from,to,views,uniques,uniques_error,filtered,previous_from,previous_to,previous_views,previous_uniques,previous_filtered,"+
			"visits,bounce_rate,visit_duration,engaged_views,reported_views,time_on_page,scroll_depth,"+
			"previous_visits,previous_bounce_rate,previous_visit_duration,previous_engaged_views,previous_time_on_page,previous_scroll_depth\n"+
			"2026-03-01T00:00:00Z,2026-03-02T00:00:00Z,1,1,0,0,2026-02-28T00:00:00Z,2026-03-01T00:00:00Z,0,0,0,0,,,0,0,,,0,,,0,,\n")
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
