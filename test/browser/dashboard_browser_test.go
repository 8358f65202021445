//go:build !race

package browser

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
)

// testSite is a creator's site on another origin: every path is a page with
// the vc.js tag, and a link that moves to /spa/route with history.pushState
// as a single-page app does. The tag loads vc.js through a requestLog,
// which keeps its engagement events from the server: the test counts
// views' verdicts.
func testSite(t *testing.T, stats, site string) string {
	t.Helper()
	var reqs requestLog
	vc := httptest.NewServer(reqs.handler(stats))
	t.Cleanup(vc.Close)
	stats = vc.URL
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>%[1]s</title>
<script defer src="%[2]s/vc.js" data-site="%[3]s"></script></head>
<body><h1 id="h">%[1]s</h1><a id="spa" href="/spa/route">to the app route</a>
<script>document.getElementById('spa').addEventListener('click', function (e) {
  e.preventDefault(); history.pushState({}, '', '/spa/route'); document.getElementById('h').textContent = 'app route';
});</script></body></html>`, r.URL.Path, stats, site)
	}))
	t.Cleanup(srv.Close)
	// The site's own host (newBrowser resolves *.example to loopback), so
	// its views come from where they belong; another origin than the stats
	// server's 127.0.0.1: the host differs as well as the port. Not
	// localhost, from which vc.js sends nothing.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	return "http://" + site + ":" + port
}

// TestDashboardBrowser drives headless Chromium through what a creator does:
// a page on their own site (another origin) sends views with vc.js,
// including a single-page-app route change; the dashboard, signed in with
// the site token, shows them; a share link shows the same to someone
// signed out and stops working once revoked. Between those, against a
// stored history with known times in the site's zone, it drives the
// controls: a wrong token at sign-in, a custom range, the intervals, the top
// pages' pager, the CSV downloads (dashboard_controls_test.go), and at the
// end a token rotated mid-session (dashboard_signin_test.go).
//
// Headless Chromium reports navigator.webdriver, so the browser's own three
// views are filtered as headless: the dashboard must show them in the
// filtered panel, exactly, and count only the views sent another way (plain
// pixel hits with a desktop browser's user agent, one address each, two
// of them reported on through the beacon as vc.js does). The engagement
// tiles and the Pages card's tabs (pages, entry and exit pages) show what
// the stats API answers, for those views and for a stored history of
// visits with engagement (dashboard_engagement_test.go).
func TestDashboardBrowser(t *testing.T) {
	b := newBrowser(t, 1400, 1000)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) {
		c.Validate.Rules.SettleWindow = -1 // counted at once: the test reads what the validators decided
	}, time.Now)
	c := apptest.NewClient(t, m)
	const site = "dash.example"
	token := c.AddSite(site)
	setZone(t, c, site, dashZone) // day buckets and ranges follow it
	dd := newDashDays(t)
	base := "http://" + m.Addr()
	page := testSite(t, base, site)

	// The browser's visit: two page loads and an in-app route change.
	b.do(t, "visit the site",
		chromedp.Navigate(page+"/"),
		chromedp.Navigate(page+"/article"),
		chromedp.WaitVisible(chromedp.ID("spa")),
		chromedp.Click(chromedp.ID("spa")),
		untilJS(`document.getElementById('h').textContent === 'app route'`),
	)
	if wd := evalJS[bool](t, b, `navigator.webdriver`); !wd {
		t.Fatal("navigator.webdriver is false in headless Chromium: the test's premise (its views are headless) does not hold")
	}
	// Views sent another way: the pixel, a desktop browser, one address each.
	valid := []struct{ page, ref string }{
		{"/article", "https://www.google.com/"}, {"/article", "https://news.ycombinator.com/item"}, {"/article", ""},
		{"/", ""}, {"/", "https://www.google.com/"}, {"/spa/route", ""},
	}
	for i, v := range valid {
		q := url.Values{"site": {site}, "page": {v.page}, "id": {"px" + strconv.Itoa(i)}}
		if v.ref != "" {
			q.Set("ref", v.ref)
		}
		req, _ := http.NewRequest("GET", base+"/p.gif?"+q.Encode(), nil)
		req.Header.Set("User-Agent", apptest.FirefoxUA)
		req.Header.Set("X-Forwarded-For", apptest.VisitorIP(100+i))
		if code, _ := c.Do(req); code != 200 {
			t.Fatalf("pixel %d: status %d", i, code)
		}
	}
	if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(200), UA: "curl/8.5.0", Site: site, Page: "/article"}); code != 200 {
		t.Fatalf("bot hit: status %d", code)
	}
	apptest.Eventually(t, 60*time.Second, func() string {
		got := apptest.Reasons(t, m, site)
		if len(got) != 3 || got["valid"] != 6 || got["headless"] != 3 || got["bot_ua"] != 1 {
			return fmt.Sprintf("views_raw by verdict = %v, want valid 6, headless 3, bot_ua 1", got)
		}
		return ""
	})
	// Engagement reports of two of them, once they are counted (a report
	// names a view its validator has seen), engaged for less time than has
	// passed: accepted, and neither engaged nor out of their bounce.
	for _, r := range []struct {
		i       int
		engaged int
		scroll  int
	}{{0, 2000, 80}, {3, 1200, 35}} {
		if code := postEvent(t, c, apptest.VisitorIP(100+r.i), map[string]any{"type": "engagement", "site": site,
			"page": valid[r.i].page, "id": "px" + strconv.Itoa(r.i), "engaged_ms": r.engaged, "scroll": r.scroll}); code != http.StatusAccepted {
			t.Fatalf("report of px%d: status %d", r.i, code)
		}
	}
	apptest.Eventually(t, 60*time.Second, func() string {
		if got := apptest.Reasons(t, m, site); len(got) != 3 || got["valid"] != 8 {
			return fmt.Sprintf("views_raw by verdict = %v, want the two reports valid too (8)", got)
		}
		return ""
	})
	// And counted: insertHistory feeds the rollups itself, which must not
	// overlap a validator's feed of the reports (feed.CatchUp is for when
	// no validator feeds).
	api := statsAPI{c: c, site: site, token: token}
	week := days(dd.today.AddDate(0, 0, -6).Format(time.DateOnly), dd.today.Format(time.DateOnly))
	apptest.Eventually(t, 60*time.Second, func() string {
		var d engSummary
		if api.json(t, "summary", week, &d); d.Reported != 2 || d.Visits != 6 {
			return fmt.Sprintf("summary: %d visits, %d views reported; want 6, 2", d.Visits, d.Reported)
		}
		return ""
	})
	// Weeks-old views at known times, for the range, interval, pager and
	// CSV checks (outside the 7 days the checks before those read).
	insertHistory(t, m, site, dd)

	// Sign in with a wrong token, then the site's.
	dash := base + "/dashboard/" + site
	load := signInWrongThenRight(t, b, dash, token)
	checkDashboard(t, b, api, week, "signed in")
	b.screenshot(t, "dashboard-signed-in.png")

	// The page filter: click a page in the top pages, then clear it.
	b.do(t, "filter by /article", chromedp.Click(chromedp.CSS(`#panel-page td.v button[title="Show only /article"]`)))
	load = b.waitLoaded(t, load)
	if v, f := elemText(t, b, "t-views"), elemText(t, b, "filter-page"); v != "3" || f != "/article" {
		t.Errorf("filtered to /article: views %q, filter %q; want 3, /article", v, f)
	}
	if got := tableRows(t, b, "#panel-page"); len(got) != 1 || !slices.Equal(got[0][:3], []string{"/article", "3", "3"}) || elemText(t, b, "t-uniques") != got[0][2] {
		t.Errorf("top pages filtered to /article = %v, the tile %s unique visitors: want one row, the tile's number", got, elemText(t, b, "t-uniques"))
	}
	// The tiles' visits are those that entered on /article (3, one view
	// each), its engagement the one report of its views.
	if d := checkTiles(t, b, api, "filtered to /article", cloneWith(week, "page", "/article")); d.Visits != 3 || d.Reported != 1 {
		t.Errorf("filtered to /article: the API's summary %+v, want 3 visits, 1 view reported", d)
	}
	checkTabs(t, b, api, "filtered to /article", cloneWith(week, "page", "/article"))
	// Other breakdowns show the page's views, or, where the store keeps
	// them for the whole site only, the site's with a note saying so.
	whole := evalJS[bool](t, b, `!document.querySelector('#panel-source .note').hidden`)
	var sources int
	for _, r := range tableRows(t, b, "#panel-source") {
		sources += cellInt(t, r[1])
	}
	if want := map[bool]int{false: 3, true: 6}[whole]; sources != want {
		t.Errorf("filtered to /article: sources sum to %d views (whole-site note shown: %v), want %d", sources, whole, want)
	}
	b.do(t, "clear the filter", chromedp.Click(chromedp.ID("filter-clear")))
	load = b.waitLoaded(t, load)
	if v := elemText(t, b, "t-views"); v != "6" {
		t.Errorf("filter cleared: views %q, want 6", v)
	}
	load = checkControls(t, b, api, dd, load)
	t.Run("engagement", func(t *testing.T) { load = checkEngagementTiles(t, b, api, dd, load) })
	t.Run("URL state", func(t *testing.T) { load = checkURLState(t, b, api, dd, dash, load) })
	t.Run("filters", func(t *testing.T) { load = checkFilters(t, b, api, dd, load) })
	t.Run("layout", func(t *testing.T) { load = checkLayout(t, b, api, dd) })
	t.Run("theme", func(t *testing.T) { load = checkTheme(t, b, load) })
	t.Run("ranges", func(t *testing.T) { load = checkRanges(t, b, api, dd, dash, load) })
	t.Run("export", func(t *testing.T) { load = checkExport(t, b, api, dd, load) })

	// The owner makes a share link, signs out, and opens the link.
	b.do(t, "create a share link",
		chromedp.Click(chromedp.ID("share-toggle")),
		chromedp.Click(chromedp.ID("share-create")),
		untilJS(`document.getElementById('share-url').value.includes('#share=')`),
	)
	link := evalJS[string](t, b, `document.getElementById('share-url').value`)
	if !strings.HasPrefix(link, dash+"#share=") {
		t.Fatalf("share link %q, want %s#share=…", link, dash)
	}
	b.do(t, "sign out", chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("token")))
	if stored := evalJS[int](t, b, `sessionStorage.length`); stored != 0 {
		t.Errorf("sessionStorage keeps %d items after sign-out", stored)
	}
	b.do(t, "open the share link", chromedp.Navigate("about:blank"), chromedp.Navigate(link))
	b.waitLoaded(t, "")
	checkDashboard(t, b, api, week, "share link")
	if vis := evalJS[[]bool](t, b, `['signin','owner-actions','mode'].map(id => !document.getElementById(id).hidden)`); !slices.Equal(vis, []bool{false, false, true}) {
		t.Errorf("share view: sign-in, owner actions, mode visible = %v, want false false true", vis)
	}
	b.screenshot(t, "dashboard-shared.png")

	// The owner signs in again and revokes the link: it stops working.
	b.do(t, "sign in and revoke",
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(dash),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	b.waitLoaded(t, "")
	b.do(t, "revoke",
		chromedp.Click(chromedp.ID("share-toggle")),
		chromedp.Click(chromedp.ID("share-revoke")),
		untilJS(`document.getElementById('share-msg').textContent.startsWith('Link revoked')`),
	)
	b.do(t, "open the revoked link",
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(link),
		untilJS(`document.body.dataset.state === 'share-invalid'`, chromedp.WithPollingTimeout(30*time.Second)),
	)
	if vis := evalJS[[]bool](t, b, `['share-invalid','dash','signin'].map(id => !document.getElementById(id).hidden)`); !slices.Equal(vis, []bool{true, false, false}) {
		t.Errorf("revoked link: share-invalid, dash, sign-in visible = %v, want true false false", vis)
	}

	// The owner's tab keeps the token; a rotation mid-session signs it out.
	b.do(t, "back to the dashboard", chromedp.Navigate("about:blank"), chromedp.Navigate(dash))
	t.Run("rotated token", func(t *testing.T) { checkRotated(t, b, c, site, b.waitLoaded(t, "")) })
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// checkDashboard asserts what the dashboard shows for the test's views,
// over the week q the page shows by default.
func checkDashboard(t *testing.T, b *browser, api statsAPI, q url.Values, when string) {
	t.Helper()
	tiles := map[string]string{"t-views": "6", "t-uniques": "6", "t-filtered": "4", "t-now": "6", "site-name": "dash.example"}
	for id, want := range tiles {
		if got := elemText(t, b, id); got != want {
			t.Errorf("%s: #%s = %q, want %q", when, id, got, want)
		}
	}
	// The chart's data: 7 days of hours, the views and visitors in them.
	chart := tableRows(t, b, "#chart-data")
	var views, uniques int
	for _, r := range chart {
		views += cellInt(t, r[1])
		uniques += cellInt(t, r[2])
	}
	if len(chart) != 7*24 || views != 6 || uniques < 6 {
		t.Errorf("%s: chart data %d buckets, %d views, %d uniques; want 168, 6, ≥ 6", when, len(chart), views, uniques)
	}
	var pages [][]string
	for _, r := range tableRows(t, b, "#panel-page") {
		pages = append(pages, r[:min(3, len(r))])
	}
	if want := [][]string{{"/article", "3", "3"}, {"/", "2", "2"}, {"/spa/route", "1", "1"}}; !equalRows(pages, want) {
		t.Errorf("%s: top pages = %v, want %v", when, pages, want)
	}
	// Six visits of one view each, two of them reported on: every one a
	// bounce. The tiles and tabs show what the API says of them.
	if d := checkTiles(t, b, api, when, q); d.Visits != 6 || d.Reported != 2 || d.BounceRate == nil || *d.BounceRate != 1 || d.EngagedViews != 0 {
		t.Errorf("%s: the API's summary %+v, want 6 visits, all bounces, 2 views reported, none engaged", when, d)
	}
	rows := checkTabs(t, b, api, when, q)
	for _, by := range []string{"entry_page", "exit_page"} {
		var got []string
		for _, r := range rows[by] {
			got = append(got, fmt.Sprintf("%s %d", r.Value, r.Visits+r.Exits))
		}
		if want := []string{"/article 3", "/ 2", "/spa/route 1"}; !slices.Equal(got, want) {
			t.Errorf("%s: the API's %s = %q, want %q", when, by, got, want)
		}
	}
	// Where the counted views came from and on what (the pixel hits'
	// referrers and user agent, as the validators classify them).
	for sel, want := range map[string][][]string{
		"#panel-source": {{"(direct)", "3", "3"}, {"Google", "2", "2"}, {"Hacker News", "1", "1"}},
		// Direct traffic is named alike in both panels.
		"#panel-referrer":   {{"(direct)", "3", "3"}, {"google.com", "2", "2"}, {"news.ycombinator.com", "1", "1"}},
		"#panel-utm_source": {{"(none)", "6", "6"}},
		"#panel-browser":    {{"Firefox", "6", "6"}},
		"#panel-device":     {{"desktop", "6", "6"}},
	} {
		if got := tableRows(t, b, sel); !equalRows(got, want) {
			t.Errorf("%s: %s = %v, want %v", when, sel, got, want)
		}
	}
	// The filtered panel: the browser's three views as headless, curl as bot_ua.
	heads := evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#filtered-data thead th')).map(th => th.textContent)`)
	sums := map[string]int{}
	for _, r := range tableRows(t, b, "#filtered-data") {
		for i := 1; i < len(r) && i < len(heads); i++ {
			sums[heads[i]] += cellInt(t, r[i])
		}
	}
	if len(sums) != 2 || sums["headless"] != 3 || sums["bot_ua"] != 1 {
		t.Errorf("%s: filtered by reason over time = %v (columns %v), want headless 3, bot_ua 1", when, sums, heads)
	}
	wantPages := [][]string{{"/article", "2", "bot_ua 1 · headless 1"}, {"/", "1", "headless 1"}, {"/spa/route", "1", "headless 1"}}
	if got := tableRows(t, b, "#filtered-pages"); !equalRows(got, wantPages) {
		t.Errorf("%s: filtered pages = %v, want %v", when, got, wantPages)
	}
	if asOf := evalJS[string](t, b, `document.getElementById('as-of').dataset.asOf || ''`); asOf == "" {
		t.Errorf("%s: no as_of shown", when)
	} else if ts, err := time.Parse(time.RFC3339, asOf); err != nil || time.Since(ts) > time.Minute {
		t.Errorf("%s: as_of %q (%v)", when, asOf, err)
	}
}

func cellInt(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(strings.ReplaceAll(s, ",", ""), &n); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

func equalRows(a, b [][]string) bool {
	return slices.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
