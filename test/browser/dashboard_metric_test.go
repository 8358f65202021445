//go:build !race

package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
)

// metricChart is what the chart's table must show for a timeseries of
// metric, read from the API as the page asks it: a bucket's start and its
// figure as the page writes it, "—" where the API says null.
func metricChart(t *testing.T, api statsAPI, q url.Values, metric string) (rows [][]string, sum float64) {
	t.Helper()
	var d struct {
		Interval, Metric string
		Buckets          []map[string]json.RawMessage
	}
	api.json(t, "timeseries", cloneWith(q, "metric", metric), &d)
	if d.Metric != metric {
		t.Fatalf("timeseries of %s: the API answers metric %q", metric, d.Metric)
	}
	f := map[string]func(float64) string{"visits": func(x float64) string { return count(uint64(x)) },
		"engaged_views": func(x float64) string { return count(uint64(x)) }, "bounce_rate": rate,
		"visit_duration": duration, "time_on_page": duration, "scroll_depth": depth}[metric]
	for _, b := range d.Buckets {
		var ts string
		var v *float64
		if json.Unmarshal(b["t"], &ts) != nil || json.Unmarshal(b[metric], &v) != nil {
			t.Fatalf("timeseries of %s: bucket %v", metric, b)
		}
		label := strings.Replace(ts[:16], "T", " ", 1)
		if d.Interval == "day" {
			label = ts[:10]
		}
		rows = append(rows, []string{label, orDash(v, f)})
		if v != nil {
			sum += *v
		}
	}
	return rows, sum
}

// publicCount is the public /count of a page.
func publicCount(t *testing.T, c *apptest.Client, site, page string) uint64 {
	t.Helper()
	resp, err := http.Get(c.Base + "/v1/sites/" + site + "/count?page=" + url.QueryEscape(page))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got struct{ Views uint64 }
	if resp.StatusCode != 200 || json.Unmarshal(body, &got) != nil {
		t.Fatalf("count of %s: %d %s", page, resp.StatusCode, body)
	}
	return got.Views
}

// TestDashboardMetric drives the chart's metric and the public count
// setting in headless Chromium, on the engagement history
// (dashboard_engagement_test.go's engHistory): a click on a tile charts
// its metric (the tile marked, the chart titled, its table the API's
// series, minute buckets no longer offered), the select does the same, and
// the chart's CSV is the metric's; the owner's Public count panel reads
// the site's settings and switches the public count to engaged views and
// back, which /count follows; a share link's viewer has no such panel.
func TestDashboardMetric(t *testing.T) {
	b := newBrowser(t, 1400, 1000)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) {
		c.Validate.Rules.SettleWindow = -1
	}, time.Now)
	c := apptest.NewClient(t, m)
	const site = "dash.example"
	token := c.AddSite(site)
	setZone(t, c, site, dashZone)
	dd := newDashDays(t)
	insertHistory(t, m, site, dd)
	api := statsAPI{c: c, site: site, token: token}

	dash := "http://" + m.Addr() + "/dashboard/" + site
	b.do(t, "sign in",
		chromedp.Navigate(dash),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	load := b.waitLoaded(t, "")
	from, to := dd.date(7), dd.date(8)
	load = pickCustom(t, b, from, to, load)
	q := cloneWith(days(from, to), "interval", "hour")

	shown := func(when, metric, title string) {
		t.Helper()
		got := evalJS[[]string](t, b, `[document.getElementById('metric').value, document.getElementById('chart-h').textContent,
  document.getElementById('interval').value,
  Array.from(document.querySelectorAll('.tile.on')).map(e => e.dataset.metric).join(','),
  Array.from(document.querySelectorAll('.tile .pick[aria-pressed=true]')).map(e => e.parentNode.dataset.metric).join(','),
  Array.from(document.querySelectorAll('#chart-data thead th')).map(e => e.textContent).join('|')]`)
		head := "Start|" + map[string]string{"views": "Views|Unique visitors", "visits": "Visits", "bounce_rate": "Bounce rate",
			"time_on_page": "Time on page", "engaged_views": "Engaged views"}[metric]
		if want := []string{metric, title, "hour", metric, metric, head}; strings.Join(got, ";") != strings.Join(want, ";") {
			t.Errorf("%s: metric, title, interval, tile marked, tile pressed, table head = %q, want %q", when, got, want)
		}
		for _, c := range calls(t, b, "/stats/timeseries") {
			if got := c.Query.Get("metric"); got != map[bool]string{true: "", false: metric}[metric == "views"] {
				t.Errorf("%s: timeseries asked with metric=%q", when, got)
			}
		}
	}
	watchCalls(t, b)
	shown("at first", "views", "Views and unique visitors")

	// Tiles: the chart follows the tile clicked.
	var sums = map[string]float64{}
	for _, c := range []struct{ metric, title string }{
		{"visits", "Visits"}, {"bounce_rate", "Bounce rate"}, {"engaged_views", "Engaged views"},
	} {
		b.do(t, "click the "+c.metric+" tile", chromedp.Click(chromedp.CSS(`.tile[data-metric="`+c.metric+`"] h2`)))
		load = b.waitLoaded(t, load)
		shown("tile "+c.metric, c.metric, c.title)
		want, sum := metricChart(t, api, q, c.metric)
		if got := tableRows(t, b, "#chart-data"); !equalRows(got, want) {
			t.Errorf("tile %s: chart data = %q, want %q", c.metric, got, want)
		}
		sums[c.metric] = sum
	}
	// engHistory's [d0+7, d0+8]: 7 visits, 5 views engaged for 10 s or
	// more (45, 58→120, 15, 70, 30 s); bounces in 3 of the hours.
	if sums["visits"] != 7 || sums["engaged_views"] != 5 || sums["bounce_rate"] != 3 {
		t.Errorf("the API's series sum to %v: want 7 visits, 5 engaged views, 3 bounced hours", sums)
	}
	// The select, as a person picks it.
	evalJS[bool](t, b, `(s => { s.value = 'time_on_page'; s.dispatchEvent(new Event('change')); return true; })(document.getElementById('metric'))`)
	load = b.waitLoaded(t, load)
	shown("select time_on_page", "time_on_page", "Time on page (median)")
	want, _ := metricChart(t, api, q, "time_on_page")
	if got := tableRows(t, b, "#chart-data"); !equalRows(got, want) {
		t.Errorf("time on page: chart data = %q, want %q", got, want)
	}
	b.screenshot(t, "dashboard-metric.png")
	// The chart's CSV is the metric's.
	dl := b.allowDownloads(t)
	b.do(t, "chart as CSV", chromedp.Click(chromedp.CSS(`.csv[data-csv=timeseries]`)))
	got := downloaded(t, filepath.Join(dl, fmt.Sprintf("%s-timeseries-time_on_page-%s-%s.csv", site, from, to)))
	if want := api.csv(t, "timeseries", cloneWith(q, "metric", "time_on_page")); !equalRows(got, want) || len(got) < 2 || got[0][1] != "time_on_page" {
		t.Errorf("time on page CSV = %q, want the API's %q", got, want)
	}
	// Today: minute buckets are offered for views only.
	b.do(t, "today", chromedp.Click(chromedp.CSS(`label:has(input[value="today"])`)))
	load = b.waitLoaded(t, load)
	minuteOff := func() bool {
		return evalJS[bool](t, b, `document.querySelector('#interval option[value=minute]').disabled`)
	}
	if !minuteOff() {
		t.Error("time on page today: minute buckets offered")
	}
	b.do(t, "click the views tile", chromedp.Click(chromedp.CSS(`.tile[data-metric="views"] .num`)))
	load = b.waitLoaded(t, load)
	if minuteOff() || evalJS[string](t, b, `document.getElementById('chart-h').textContent`) != "Views and unique visitors" {
		t.Error("views today: minute buckets not offered, or the chart not of views")
	}

	// The public count: /pricing has 5 views, one engaged for 10 s or
	// more (15 s), none for 20 s.
	b.do(t, "open the public count panel",
		chromedp.Click(chromedp.ID("count-toggle")),
		untilJS(`!document.getElementById('count-save').disabled`),
	)
	if got := evalJS[[]string](t, b, `[document.querySelector('input[name=count-mode]:checked').value, document.getElementById('engaged-after').value]`); strings.Join(got, " ") != "views 10" {
		t.Errorf("the panel reads %q, want views 10", got)
	}
	save := func(mode, after string) {
		t.Helper()
		evalJS[bool](t, b, `(() => { document.querySelector('input[name=count-mode][value=`+mode+`]').click(); document.getElementById('engaged-after').value = `+jsString(after)+`; return true; })()`)
		b.do(t, "save "+mode+" "+after,
			chromedp.Click(chromedp.ID("count-save")),
			untilJS(`document.getElementById('count-msg').textContent.startsWith('Saved') && document.getElementById('count-panel').dataset.mode === `+jsString(mode)),
		)
		load = b.waitLoaded(t, load) // the tiles read again
	}
	settings := func() string {
		t.Helper()
		req, _ := http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/settings", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		code, body := c.Do(req)
		if code != 200 {
			t.Fatalf("settings: %d %s", code, body)
		}
		return string(body)
	}
	countIs := func(when string, want uint64) {
		t.Helper()
		apptest.Eventually(t, 30*time.Second, func() string {
			if n := publicCount(t, c, site, "/pricing"); n != want {
				return fmt.Sprintf("%s: /pricing counts %d, want %d", when, n, want)
			}
			return ""
		})
	}
	countIs("counting views", 5)
	save("engaged", "20")
	if got := settings(); got != `{"site":"dash.example","engaged_after":20,"count_mode":"engaged","embed_origins":[]}` {
		t.Errorf("after saving engaged 20 s: settings %s", got)
	}
	if got := elemText(t, b, "s-engaged"); !strings.HasPrefix(got, "≥ 20 s engaged") {
		t.Errorf("the engaged views tile after 20 s: %q", got)
	}
	countIs("engaged after 20 s", 0)
	save("engaged", "10")
	countIs("engaged after 10 s", 1)
	b.screenshot(t, "dashboard-public-count.png")
	save("views", "10")
	if got := settings(); got != `{"site":"dash.example","engaged_after":10,"count_mode":"views","embed_origins":[]}` {
		t.Errorf("back to views: settings %s", got)
	}
	countIs("views", 5)

	// A share link's viewer sees neither the button nor the panel.
	req, _ := http.NewRequest("POST", c.Base+"/v1/sites/"+site+"/share", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	code, body := c.Do(req)
	var sh struct{ URL string }
	if code != http.StatusCreated || json.Unmarshal(body, &sh) != nil {
		t.Fatalf("share: %d %s", code, body)
	}
	b.do(t, "open the share link", chromedp.Navigate("about:blank"), chromedp.Navigate("http://"+m.Addr()+sh.URL))
	b.waitLoaded(t, "")
	if vis := evalJS[[]bool](t, b, `['count-toggle','count-panel'].map(id => { const e = document.getElementById(id); return e.offsetParent !== null; })`); vis[0] || vis[1] {
		t.Errorf("share view: public count button, panel visible = %v, want neither", vis)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
