package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/viewcount/viewcount"
)

// The dashboard's controls (custom range, interval, pager, CSV, sign-in
// errors) are checked against a history with known times in the site's
// zone. dashZone has no daylight-saving time, so every local day has 24
// hours and the expected bucket counts are fixed.
const dashZone = "Asia/Tokyo"

// pastView is one stored view of the history: day is relative to d0 (20
// days before today in dashZone), clock the local time of day.
type pastView struct {
	day    int
	clock  string
	page   string
	reason viewcount.Reason
}

// dashHistory: 15 valid views on 12 pages inside [d0, d0+2] (one page more
// than the pager's 10), one rejected one, and valid views just outside each
// end. Read in UTC instead of the site's zone, [d0, d0+2] would lose
// d0 00:30 (d0-1 15:30 UTC) and gain both /old/after views (d0+2 20:00
// and 23:00 UTC): other pages and 16 views instead of 15.
var dashHistory = []pastView{
	{-1, "23:30:00", "/old/before", viewcount.Valid},
	{0, "00:30:00", "/p/01", viewcount.Valid}, {0, "10:00:00", "/p/02", viewcount.Valid}, {0, "18:00:00", "/p/03", viewcount.Valid},
	{1, "12:00:10", "/p/01", viewcount.Valid}, {1, "12:05:20", "/p/04", viewcount.Valid}, {1, "12:05:40", "/p/05", viewcount.Valid},
	{1, "13:00:00", "/p/06", viewcount.Valid}, {1, "14:00:00", "/p/03", viewcount.BotUA}, {1, "20:00:00", "/p/07", viewcount.Valid},
	{1, "23:59:00", "/p/02", viewcount.Valid},
	{2, "00:00:00", "/p/08", viewcount.Valid}, {2, "08:00:00", "/p/09", viewcount.Valid}, {2, "09:00:00", "/p/10", viewcount.Valid},
	{2, "09:30:00", "/p/11", viewcount.Valid}, {2, "15:00:00", "/p/12", viewcount.Valid}, {2, "23:30:00", "/p/01", viewcount.Valid},
	{3, "05:00:00", "/old/after", viewcount.Valid}, {3, "08:00:00", "/old/after", viewcount.Valid},
}

// dashDays are the history's calendar days in dashZone.
type dashDays struct {
	loc   *time.Location
	today time.Time // local midnight
	d0    time.Time
}

func newDashDays(t *testing.T) dashDays {
	t.Helper()
	loc, err := time.LoadLocation(dashZone)
	if err != nil {
		t.Fatal(err)
	}
	y, m, d := time.Now().In(loc).Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, loc)
	return dashDays{loc: loc, today: today, d0: today.AddDate(0, 0, -20)}
}

func (dd dashDays) date(day int) string { return dd.d0.AddDate(0, 0, day).Format(time.DateOnly) }

func (v pastView) at(dd dashDays) time.Time {
	c, err := time.Parse(time.TimeOnly, v.clock)
	if err != nil {
		panic(err)
	}
	d := dd.d0.AddDate(0, 0, v.day)
	return time.Date(d.Year(), d.Month(), d.Day(), c.Hour(), c.Minute(), c.Second(), 0, dd.loc)
}

// setZone sets the site's time zone through the admin API.
func setZone(t *testing.T, c *client, site, zone string) {
	t.Helper()
	req, _ := http.NewRequest("PATCH", c.base+"/v1/admin/sites/"+site, strings.NewReader(`{"timezone":"`+zone+`"}`))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	if code, body := c.do(req); code != http.StatusOK {
		t.Fatalf("set time zone: %d %s", code, body)
	}
}

// insertHistory writes dashHistory into the store the serve counts into.
// Ingest stamps every event with the server's receive time (a client's
// clock is not trusted) and the serve's clock also drives salts and the
// validators' windows, so views weeks old cannot come through the pixel:
// they go in as verdicts through the store's real insert path, which feeds
// the same materialized views. Partition 4000 is none the stream has, so
// no validator's progress check ever reads these rows.
func insertHistory(t *testing.T, m *Main, site string, dd dashDays) {
	t.Helper()
	rows := make([]viewcount.Verdict, len(dashHistory))
	for i, v := range dashHistory {
		rows[i] = viewcount.Verdict{
			Event: viewcount.Event{
				Time: v.at(dd).UTC(), Site: site, Page: v.page, UA: firefoxUA, ID: "past" + strconv.Itoa(i),
				Visitor: uint64(7000 + i), Network: uint64(7000 + i), Source: viewcount.SourcePixel,
			},
			Reason: v.reason, Partition: 4000, Seq: uint64(1 + i),
			Dims: viewcount.Dims{RefSource: "(direct)", Browser: "Firefox", OS: "Linux", Device: "desktop"},
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.store.InsertViews(ctx, "dashboard-test-history", rows); err != nil {
		t.Fatalf("insert the history: %v", err)
	}
}

// series is what the chart's table must show for [from, to] (days relative
// to d0) in buckets of interval: every bucket's label, with the history's
// valid views in it (each view its own visitor, so uniques are the same).
func (dd dashDays) series(from, to int, interval string) [][]string {
	step, layout := time.Hour, "2006-01-02 15:04"
	switch interval {
	case "minute":
		step = time.Minute
	case "day":
		layout = time.DateOnly
	}
	views := map[string]int{}
	for _, v := range dashHistory {
		if v.reason == viewcount.Valid {
			views[v.at(dd).Truncate(step).Format(layout)]++ // dashZone's offset is whole hours
		}
	}
	var out [][]string
	end := dd.d0.AddDate(0, 0, to+1)
	for b := dd.d0.AddDate(0, 0, from); b.Before(end); {
		n := strconv.Itoa(views[b.Format(layout)])
		out = append(out, []string{b.Format(layout), n, n})
		if interval == "day" {
			b = b.AddDate(0, 0, 1)
		} else {
			b = b.Add(step)
		}
	}
	return out
}

// watchCalls records the stats API calls the page makes from now on (the
// page's own fetch, wrapped), so a test can check their exact queries.
func watchCalls(t *testing.T, b *browser) {
	t.Helper()
	evalJS[bool](t, b, `(() => {
  window.__calls = [];
  if (!window.__fetch) window.__fetch = window.fetch;
  window.fetch = (u, o) => { window.__calls.push({url: String(u), accept: (o && o.headers && o.headers.Accept) || ''}); return window.__fetch(u, o); };
  return true;
})()`)
}

type apiCall struct {
	Path   string
	Query  url.Values
	Accept string
}

// calls returns the stats API calls to path (e.g. "/stats/timeseries")
// since the last watchCalls or calls to that path, and forgets them.
func calls(t *testing.T, b *browser, path string) []apiCall {
	t.Helper()
	raw := evalJS[string](t, b, `(() => {
  const all = window.__calls, mine = [], path = `+jsString(path)+`;
  window.__calls = all.filter(c => { const m = new URL(c.url, location.origin).pathname.endsWith(path); if (m) mine.push(c); return !m; });
  return JSON.stringify(mine);
})()`)
	var all []struct{ URL, Accept string }
	if err := json.Unmarshal([]byte(raw), &all); err != nil {
		t.Fatalf("calls %s: %v", raw, err)
	}
	var out []apiCall
	for _, c := range all {
		u, err := url.Parse(c.URL)
		if err != nil {
			t.Fatalf("call %q: %v", c.URL, err)
		}
		if strings.HasSuffix(u.Path, path) {
			out = append(out, apiCall{u.Path, u.Query(), c.Accept})
		}
	}
	return out
}

func pickRange(t *testing.T, b *browser, value, load string) string {
	t.Helper()
	b.do(t, "range "+value, chromedp.Click(chromedp.CSS(`label:has(input[value="`+value+`"])`)))
	return b.waitLoaded(t, load)
}

func pickCustom(t *testing.T, b *browser, from, to, load string) string {
	t.Helper()
	b.do(t, "custom range "+from+" to "+to,
		chromedp.Click(chromedp.CSS(`label:has(input[value="custom"])`)),
		chromedp.WaitVisible(chromedp.ID("custom")),
		chromedp.SetValue(chromedp.ID("from"), from),
		chromedp.SetValue(chromedp.ID("to"), to),
		chromedp.Click(chromedp.ID("custom-apply")),
	)
	return b.waitLoaded(t, load)
}

// pickInterval chooses an interval as a person does: the select changes
// and says so.
func pickInterval(t *testing.T, b *browser, interval, load string) string {
	t.Helper()
	evalJS[bool](t, b, `(s => { s.value = `+jsString(interval)+`; s.dispatchEvent(new Event('change')); return true; })(document.getElementById('interval'))`)
	return b.waitLoaded(t, load)
}

// signInWrongThenRight signs in with a wrong token first: the page says
// so, keeps nothing, and the right token then opens the dashboard.
func signInWrongThenRight(t *testing.T, b *browser, dash, token string) string {
	t.Helper()
	b.do(t, "sign in with a wrong token",
		chromedp.Navigate(dash),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), "vcs_wrong"+token[len(token)/2:]),
		chromedp.Click(chromedp.ID("signin-submit")),
		untilJS(`document.getElementById('signin-error').textContent !== ''`),
	)
	if got, want := elemText(t, b, "signin-error"), "That token is not valid for dash.example."; got != want {
		t.Errorf("wrong token: message %q, want %q", got, want)
	}
	if n := evalJS[int](t, b, `sessionStorage.length`); n != 0 {
		t.Errorf("wrong token: sessionStorage holds %d items, want 0", n)
	}
	if vis := evalJS[[]bool](t, b, `['signin','dash'].map(id => !document.getElementById(id).hidden)`); !slices.Equal(vis, []bool{true, false}) {
		t.Errorf("wrong token: sign-in, dashboard visible = %v, want true false", vis)
	}
	b.do(t, "sign in with the site token",
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	load := b.waitLoaded(t, "")
	if got := evalJS[string](t, b, `sessionStorage.getItem('viewcount.token.dash.example') || ''`); got != token {
		t.Errorf("signed in: sessionStorage keeps %q, want the site token", got)
	}
	if got := elemText(t, b, "signin-error"); got != "" {
		t.Errorf("signed in: sign-in message %q left", got)
	}
	return load
}

// checkControls runs the custom range, interval, pager and CSV checks on a
// signed-in dashboard showing the default 7 days, and returns the last load.
func checkControls(t *testing.T, b *browser, dd dashDays, load string) string {
	dl := t.TempDir()
	watchCalls(t, b)
	t.Run("custom range", func(t *testing.T) {
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
	})

	t.Run("interval", func(t *testing.T) {
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
		want := map[string]int{}
		for _, r := range dd.series(-1, 3, "day") {
			want[r[0]] = cellInt(t, r[1])
		}
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
	})

	t.Run("pager", func(t *testing.T) {
		load = pickCustom(t, b, dd.date(0), dd.date(2), load)
		first := [][]string{{"/p/01", "3", "3"}, {"/p/02", "2", "2"}}
		for i := 3; i <= 10; i++ {
			first = append(first, []string{fmt.Sprintf("/p/%02d", i), "1", "1"})
		}
		second := [][]string{{"/p/11", "1", "1"}, {"/p/12", "1", "1"}}
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
	})

	t.Run("CSV", func(t *testing.T) {
		if _, err := chromedp.Call(b.ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
			Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl,
		}); err != nil {
			t.Fatalf("allow downloads: %v", err)
		}
		calls(t, b, "") // forget the loads' calls
		name := fmt.Sprintf("dash.example-page-%s-%s.csv", dd.date(0), dd.date(2))
		b.do(t, "top pages as CSV", chromedp.Click(chromedp.CSS(`#panel-page .csv`)))
		got := downloaded(t, filepath.Join(dl, name))
		want := append([][]string{{"page", "views", "uniques"}}, tableRows(t, b, "#panel-page")...)
		b.do(t, "next page", chromedp.Click(chromedp.CSS(`#panel-page .next`)),
			untilJS(`document.querySelector('#panel-page .range').textContent === '11–12 of 12'`))
		want = append(want, tableRows(t, b, "#panel-page")...)
		if !equalRows(got, want) {
			t.Errorf("top pages CSV = %v, want the table's pages %v", got, want)
		}
		cs := calls(t, b, "/stats/breakdown")
		wantQ := url.Values{"from": {dd.date(0)}, "to": {dd.date(2)}, "by": {"page"}, "limit": {"1000"}, "format": {"csv"}}
		if len(cs) < 1 || cs[0].Query.Encode() != wantQ.Encode() || cs[0].Accept != "text/csv" {
			t.Errorf("top pages CSV: calls %v, want one with %s, Accept text/csv", cs, wantQ.Encode())
		}

		name = fmt.Sprintf("dash.example-timeseries-%s-%s.csv", dd.date(0), dd.date(2))
		b.do(t, "chart as CSV", chromedp.Click(chromedp.CSS(`.csv[data-csv=timeseries]`)))
		got = downloaded(t, filepath.Join(dl, name))
		table := tableRows(t, b, "#chart-data")
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
	})
	return load
}

// chartIs checks the chart's table against want, bucket for bucket.
func chartIs(t *testing.T, b *browser, when, interval string, want [][]string) {
	t.Helper()
	if got := checkInterval(t, b, when, interval, len(want)); !equalRows(got, want) {
		t.Errorf("%s: chart data = %v, want %v", when, got, want)
	}
}

// checkInterval checks the interval shown and asked for, and the number of
// buckets drawn, and returns the chart's table.
func checkInterval(t *testing.T, b *browser, when, interval string, n int) [][]string {
	t.Helper()
	if got := evalJS[string](t, b, `document.getElementById('interval').value`); got != interval {
		t.Errorf("%s: interval %q, want %q", when, got, interval)
	}
	for _, c := range calls(t, b, "/stats/timeseries") {
		if c.Query.Get("interval") != interval {
			t.Errorf("%s: timeseries asked with interval=%s, want %s", when, c.Query.Get("interval"), interval)
		}
	}
	rows := tableRows(t, b, "#chart-data")
	if len(rows) != n {
		t.Errorf("%s: %d buckets, want %d", when, len(rows), n)
	}
	return rows
}

func pageIs(t *testing.T, b *browser, when string, want [][]string, rng string, prevOff, nextOff bool) {
	t.Helper()
	if got := tableRows(t, b, "#panel-page"); !equalRows(got, want) {
		t.Errorf("%s: top pages = %v, want %v", when, got, want)
	}
	got := evalJS[[]string](t, b, `(s => [s.querySelector('.range').textContent, String(s.querySelector('.prev').disabled), String(s.querySelector('.next').disabled), String(s.querySelector('.pager').hidden)])(document.getElementById('panel-page'))`)
	if w := []string{rng, strconv.FormatBool(prevOff), strconv.FormatBool(nextOff), "false"}; !slices.Equal(got, w) {
		t.Errorf("%s: pager (range, previous disabled, next disabled, hidden) = %v, want %v", when, got, w)
	}
}

// downloaded waits for the browser to finish saving path and parses it.
func downloaded(t *testing.T, path string) [][]string {
	t.Helper()
	var data []byte
	eventually(t, 30*time.Second, func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Sprintf("download %s: %v", filepath.Base(path), err)
		}
		data = b
		return ""
	})
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatalf("download %s: %v\n%s", filepath.Base(path), err, data)
	}
	return rows
}

// checkRotated rotates the site token while the dashboard is open: the
// next load sends the user back to the sign-in form with a message and
// keeps nothing; the new token then opens the dashboard again.
func checkRotated(t *testing.T, b *browser, c *client, site, load string) {
	t.Helper()
	req, _ := http.NewRequest("POST", c.base+"/v1/admin/sites/"+site+"/token", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	code, body := c.do(req)
	var out struct{ Token string }
	if err := json.Unmarshal(body, &out); code != http.StatusOK || err != nil || out.Token == "" {
		t.Fatalf("rotate: %d %s (%v)", code, body, err)
	}
	b.do(t, "30 days with the old token",
		chromedp.Click(chromedp.CSS(`label:has(input[value="30d"])`)),
		untilJS(`document.body.dataset.state === 'signin'`),
	)
	want := "Signed out: the token for dash.example no longer works (it was rotated or revoked). Sign in with the current token."
	if got := elemText(t, b, "signin-error"); got != want {
		t.Errorf("rotated: message %q, want %q", got, want)
	}
	if n := evalJS[int](t, b, `sessionStorage.length`); n != 0 {
		t.Errorf("rotated: sessionStorage holds %d items, want 0", n)
	}
	if vis := evalJS[[]bool](t, b, `['signin','dash','owner-actions'].map(id => !document.getElementById(id).hidden)`); !slices.Equal(vis, []bool{true, false, false}) {
		t.Errorf("rotated: sign-in, dashboard, owner actions visible = %v, want true false false", vis)
	}
	b.do(t, "sign in with the new token",
		chromedp.SendKeys(chromedp.ID("token"), out.Token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	b.waitLoaded(t, load)
	// Still 30 days: the 6 views sent today and the history's 18.
	if got := elemText(t, b, "t-views"); got != "24" {
		t.Errorf("new token, 30 days: views %q, want 24", got)
	}
}
