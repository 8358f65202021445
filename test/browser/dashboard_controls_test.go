//go:build !race

package browser

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// checkControls runs the custom range, interval, pager and CSV checks on a
// signed-in dashboard showing the default 7 days, and returns the last load.
func checkControls(t *testing.T, b *browser, api statsAPI, dd dashDays, load string) string {
	watchCalls(t, b)
	t.Run("custom range", func(t *testing.T) { load = checkCustomRange(t, b, api, dd, load) })
	t.Run("interval", func(t *testing.T) { load = checkIntervals(t, b, dd, load) })
	t.Run("pager", func(t *testing.T) { load = checkPager(t, b, dd, load) })
	t.Run("CSV", func(t *testing.T) { load = checkCSV(t, b, api, dd, load) })
	return load
}

// checkCustomRange picks [d0, d0+2]: every call asks for exactly those
// dates (the API reads them in the site's zone) and the tiles and tables
// show the views of those local days only.
func checkCustomRange(t *testing.T, b *browser, api statsAPI, dd dashDays, load string) string {
	load = pickCustom(t, b, dd.date(0), dd.date(2), load)
	for _, what := range []string{"summary", "timeseries", "breakdown", "filtered"} {
		cs := calls(t, b, "/stats/"+what)
		if len(cs) == 0 {
			t.Errorf("custom range: no %s call", what)
		}
		for _, c := range cs {
			if c.Query.Get("from") != dd.date(0) || c.Query.Get("to") != dd.date(2) {
				t.Errorf("custom range: %s?%s, want from=%s to=%s", what, c.Query.Encode(), dd.date(0), dd.date(2))
			}
		}
	}
	tiles := map[string]string{
		"t-views": "15", "t-uniques": "15", "t-filtered": "1",
		// The 3 days before hold one view (/old/before) and nothing filtered.
		"c-views": "▲ +1400% vs previous period", "c-uniques": "▲ +1400% vs previous period",
		"c-filtered": "no filtered events in the previous period",
	}
	for id, want := range tiles {
		if got := elemText(t, b, id); got != want {
			t.Errorf("custom range: #%s = %q, want %q", id, got, want)
		}
	}
	if got, want := tableRows(t, b, "#filtered-pages"), [][]string{{"/p/03", "1", "bot_ua 1"}}; !equalRows(got, want) {
		t.Errorf("custom range: filtered pages = %v, want %v", got, want)
	}
	if got, want := tableRows(t, b, "#panel-source"), [][]string{{"(direct)", "15", "15"}}; !equalRows(got, want) {
		t.Errorf("custom range: sources = %v, want %v", got, want)
	}
	// Every view a visit and a bounce, none reported on: the engagement
	// figures are dashes that say why.
	q := days(dd.date(0), dd.date(2))
	if d := checkTiles(t, b, api, "custom range", q); d.Visits != 15 || d.Previous.Visits != 1 || d.Reported != 0 || d.TimeOnPage != nil {
		t.Errorf("custom range: the API's summary %+v, want 15 visits (1 before), none reported", d)
	}
	if got := evalJS[string](t, b, `document.getElementById('t-top').title`); got != noReports {
		t.Errorf("custom range: time on page's title %q, want %q", got, noReports)
	}
	checkTabs(t, b, api, "custom range", q)
	return load
}

// checkIntervals checks the chart's buckets as the range and the
// interval select change them.
func checkIntervals(t *testing.T, b *browser, dd dashDays, load string) string {
	// Three days: hours by default (72 buckets); minutes are not offered.
	chartIs(t, b, "3 days, automatic", "hour", dd.series(0, 2, "hour"))
	if dis := evalJS[[]bool](t, b, `Array.from(document.getElementById('interval').options).map(o => o.disabled)`); !slices.Equal(dis, []bool{true, false, false}) {
		t.Errorf("3 days: minute, hour, day disabled = %v, want true false false", dis)
	}
	load = pickInterval(t, b, "day", load)
	chartIs(t, b, "3 days by day", "day", dd.series(0, 2, "day"))
	// One day keeps the chosen interval; minutes are offered now.
	load = pickCustom(t, b, dd.date(1), dd.date(1), load)
	chartIs(t, b, "1 day, day kept", "day", dd.series(1, 1, "day"))
	load = pickInterval(t, b, "minute", load)
	chartIs(t, b, "1 day by minute", "minute", dd.series(1, 1, "minute"))
	load = pickInterval(t, b, "hour", load)
	chartIs(t, b, "1 day by hour", "hour", dd.series(1, 1, "hour"))

	// The presets choose for themselves: 30 days by day, today and
	// 24 hours by hour.
	load = pickRange(t, b, "30d", load)
	want := dd.dayViews()
	var live int
	rows := checkInterval(t, b, "30 days", "day", 30)
	for i, r := range rows {
		if w, ok := want[r[0]]; ok && cellInt(t, r[1]) != w {
			t.Errorf("30 days: %s has %s views, want %d", r[0], r[1], w)
		} else if !ok && r[1] != "0" {
			live += cellInt(t, r[1])
		}
		if wantDay := dd.today.AddDate(0, 0, i-29).Format(time.DateOnly); r[0] != wantDay {
			t.Errorf("30 days: bucket %d is %s, want %s", i, r[0], wantDay)
		}
	}
	if live != 6 {
		t.Errorf("30 days: %d views outside the history's days, want the 6 sent today", live)
	}
	load = pickRange(t, b, "today", load)
	if rows := checkInterval(t, b, "today", "hour", 24); len(rows) == 24 && rows[0][0] != dd.today.Format("2006-01-02 15:04") {
		t.Errorf("today: first bucket %s, want %s", rows[0][0], dd.today.Format("2006-01-02 15:04"))
	}
	load = pickRange(t, b, "24h", load)
	from := calls(t, b, "/stats/timeseries")
	wantN := 25 // [now-24h, now) widened to whole hours
	if len(from) > 0 && strings.HasSuffix(from[len(from)-1].Query.Get("from"), ":00:00Z") {
		wantN = 24
	}
	rows = checkInterval(t, b, "24 hours", "hour", wantN)
	var views int
	for _, r := range rows {
		views += cellInt(t, r[1])
	}
	if views != 6 {
		t.Errorf("24 hours: %d views, want 6", views)
	}
	return load
}

// checkPager turns the top pages (12 in [d0, d0+2], 10 a page) forth and back.
func checkPager(t *testing.T, b *browser, dd dashDays, load string) string {
	load = pickCustom(t, b, dd.date(0), dd.date(2), load)
	// No view of the history reported: no time on page or scroll depth.
	first := [][]string{{"/p/01", "3", "3", dash, dash}, {"/p/02", "2", "2", dash, dash}}
	for i := 3; i <= 10; i++ {
		first = append(first, []string{fmt.Sprintf("/p/%02d", i), "1", "1", dash, dash})
	}
	second := [][]string{{"/p/11", "1", "1", dash, dash}, {"/p/12", "1", "1", dash, dash}}
	pageIs(t, b, "first page", first, "1–10 of 12", true, false)
	calls(t, b, "") // forget the load's calls
	b.do(t, "next page", chromedp.Click(chromedp.CSS(`#panel-page .next`)),
		untilJS(`document.querySelector('#panel-page .range').textContent === '11–12 of 12'`))
	pageIs(t, b, "next", second, "11–12 of 12", false, true)
	if cs := calls(t, b, "/stats/breakdown"); len(cs) != 1 || cs[0].Query.Get("offset") != "10" || cs[0].Query.Get("by") != "page" {
		t.Errorf("next: breakdown calls %v, want one by=page offset=10", cs)
	}
	b.do(t, "previous page", chromedp.Click(chromedp.CSS(`#panel-page .prev`)),
		untilJS(`document.querySelector('#panel-page .range').textContent === '1–10 of 12'`))
	pageIs(t, b, "previous", first, "1–10 of 12", true, false)
	// A panel with fewer values than a page has no pager.
	if hidden := evalJS[bool](t, b, `document.querySelector('#panel-source .pager').hidden`); !hidden {
		t.Error("sources (1 value): pager shown")
	}
	return load
}

// checkCSV downloads the top pages and the chart as CSV with the buttons
// and compares the files with the tables (and the API's CSV) and the
// calls with the range.
func checkCSV(t *testing.T, b *browser, api statsAPI, dd dashDays, load string) string {
	dl := b.allowDownloads(t)
	calls(t, b, "") // forget the loads' calls
	name := fmt.Sprintf("dash.example-page-%s-%s.csv", dd.date(0), dd.date(2))
	b.do(t, "top pages as CSV", chromedp.Click(chromedp.CSS(`#pages .csv`)))
	got := downloaded(t, filepath.Join(dl, name))
	table := tableRows(t, b, "#panel-page")
	b.do(t, "next page", chromedp.Click(chromedp.CSS(`#panel-page .next`)),
		untilJS(`document.querySelector('#panel-page .range').textContent === '11–12 of 12'`))
	table = append(table, tableRows(t, b, "#panel-page")...)
	// The table's pages, views and uniques; no engagement (empty cells).
	want := [][]string{{"page", "views", "uniques", "time_on_page", "scroll_depth", "engaged_views"}}
	for _, r := range table {
		want = append(want, append(slices.Clone(r[:3]), "", "", ""))
	}
	if !equalRows(got, want) {
		t.Errorf("top pages CSV = %v, want the table's pages %v", got, want)
	}
	if fromAPI := api.csv(t, "breakdown", url.Values{"from": {dd.date(0)}, "to": {dd.date(2)}, "by": {"page"}, "limit": {"1000"}}); !equalRows(got, fromAPI) {
		t.Errorf("top pages CSV = %v, want the API's %v", got, fromAPI)
	}
	cs := calls(t, b, "/stats/breakdown")
	wantQ := url.Values{"from": {dd.date(0)}, "to": {dd.date(2)}, "by": {"page"}, "limit": {"1000"}, "format": {"csv"}}
	if len(cs) < 1 || cs[0].Query.Encode() != wantQ.Encode() || cs[0].Accept != "text/csv" {
		t.Errorf("top pages CSV: calls %v, want one with %s, Accept text/csv", cs, wantQ.Encode())
	}

	name = fmt.Sprintf("dash.example-timeseries-%s-%s.csv", dd.date(0), dd.date(2))
	b.do(t, "chart as CSV", chromedp.Click(chromedp.CSS(`.csv[data-csv=timeseries]`)))
	got = downloaded(t, filepath.Join(dl, name))
	table = tableRows(t, b, "#chart-data")
	if len(got) != 1+len(table) || len(table) != 72 || !slices.Equal(got[0], []string{"t", "views", "uniques"}) {
		t.Fatalf("chart CSV: %d lines (header %v), table %d rows; want 73, 72", len(got), got[0], len(table))
	}
	for i, r := range got[1:] {
		ts, err := time.Parse(time.RFC3339, r[0])
		if row := []string{ts.In(dd.loc).Format("2006-01-02 15:04"), r[1], r[2]}; err != nil || !slices.Equal(row, table[i]) {
			t.Errorf("chart CSV line %d = %v (%v), table row %v", i+2, r, err, table[i])
		}
	}
	cs = calls(t, b, "/stats/timeseries")
	wantQ = url.Values{"from": {dd.date(0)}, "to": {dd.date(2)}, "interval": {"hour"}, "format": {"csv"}}
	if len(cs) != 1 || cs[0].Query.Encode() != wantQ.Encode() {
		t.Errorf("chart CSV: calls %v, want one with %s", cs, wantQ.Encode())
	}
	return load
}
