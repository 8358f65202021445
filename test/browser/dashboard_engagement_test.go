//go:build !race

package browser

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// engView is a view of engHistory: visitor numbers the person (views of
// one visitor less than 30 minutes apart make one visit), reports are the
// engagement reports vc.js sent of it.
type engView struct {
	day     int
	clock   string
	visitor int
	page    string
	reports []engReport
}

// engReport: after the view, engaged for engaged and scrolled to scroll %.
type engReport struct {
	after, engaged time.Duration
	scroll         uint8
}

func (v engView) at(dd dashDays) time.Time { return pastView{day: v.day, clock: v.clock}.at(dd) }

// rep is a report after seconds, engaged for engaged seconds.
func rep(after, engaged int, scroll uint8) engReport {
	return engReport{time.Duration(after) * time.Second, time.Duration(engaged) * time.Second, scroll}
}

// engHistory: visits with engagement on d0+5 to d0+8, away from the days
// the other checks read. [d0+7, d0+8] holds 7 visits of 11 views: 3
// bounces (one view, engaged under 10 s or not reported), 4 left from
// /pricing, 8 views reported (a repeated and an overclaimed report add
// nothing). The two days before it hold 4 visits, 2 of them bounces.
// Local times from 09:00 to 24:00 are one UTC day in dashZone, so no
// visit is cut at 00:00 UTC.
var engHistory = []engView{
	// The previous period.
	{5, "11:00:00", 7, "/guide", []engReport{rep(25, 20, 50)}},
	{5, "13:00:00", 8, "/pricing", nil},
	{6, "10:00:00", 9, "/guide", []engReport{rep(5, 4, 20)}},
	{6, "10:03:00", 9, "/blog/hello", []engReport{rep(12, 9, 45)}},
	{6, "18:00:00", 10, "/blog/hello", []engReport{rep(3, 2, 5)}},
	// [d0+7, d0+8]. Visitor 1 reads the guide and goes to the pricing.
	{7, "10:00:00", 1, "/guide", []engReport{rep(50, 45, 90)}},
	{7, "10:01:00", 1, "/guide/install", []engReport{rep(60, 58, 70), rep(130, 120, 100)}},
	{7, "10:04:00", 1, "/pricing", nil},
	{7, "12:00:00", 2, "/guide", []engReport{rep(6, 5, 30)}},                      // a bounce
	{7, "14:00:00", 3, "/pricing", []engReport{rep(20, 15, 60)}},                  // one view, engaged: no bounce
	{7, "16:00:00", 4, "/blog/hello", nil},                                        // a bounce, not measured
	{8, "09:00:00", 5, "/blog/hello", []engReport{rep(75, 70, 75)}},               // …
	{8, "09:02:00", 5, "/guide", []engReport{rep(10, 8, 40)}},                     // … a visit of two views
	{8, "15:00:00", 5, "/pricing", []engReport{rep(4, 3, 10)}},                    // later: a new visit, a bounce
	{8, "20:00:00", 6, "/guide", []engReport{rep(31, 30, 100), rep(32, 30, 100)}}, // the second a repeat
	{8, "20:10:00", 6, "/pricing", []engReport{rep(5, 60, 80)}},                   // the same visit; overclaimed: a minute in 5 s
}

// tabState is which tab is selected, focused, and shown, as the ARIA
// attributes, the tab order and the panels' visibility tell.
func tabState(t *testing.T, b *browser) []string {
	t.Helper()
	return evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#pages [role=tab]')).map(tab => {
  const panel = document.getElementById(tab.getAttribute('aria-controls'));
  return [tab.id, tab.getAttribute('aria-selected'), tab.tabIndex, document.activeElement === tab ? 'focus' : '-',
    panel.hidden ? 'hidden' : 'shown', panel.getAttribute('role'), panel.getAttribute('aria-labelledby') === tab.id].join(' ');
})`)
}

func wantTabs(selected int, focused bool) []string {
	var out []string
	for i, by := range []string{"page", "entry_page", "exit_page"} {
		on := i == selected
		f := map[bool]string{true: "focus", false: "-"}[on && focused]
		out = append(out, fmt.Sprintf("tab-%s %v %d %s %s tabpanel true", by, on, map[bool]int{true: 0, false: -1}[on], f,
			map[bool]string{true: "shown", false: "hidden"}[on]))
	}
	return out
}

// pressKey sends a key to the focused element.
func pressKey(t *testing.T, b *browser, key string) {
	t.Helper()
	b.do(t, "press "+key, chromedp.KeyEvent(key))
}

// checkEngagementTiles reads the engagement history's days: the tiles and all
// three tabs against the API, the tabs by keyboard, each tab's CSV, a
// page picked from the entry pages, and a range with nothing to measure.
func checkEngagementTiles(t *testing.T, b *browser, api statsAPI, dd dashDays, load string) string {
	from, to := dd.date(7), dd.date(8)
	load = pickCustom(t, b, from, to, load)
	q := days(from, to)
	d := checkTiles(t, b, api, "engagement days", q)
	// What engHistory holds, so the comparisons above are not of nothing.
	if d.Visits != 7 || d.Previous.Visits != 4 || d.BounceRate == nil || math.Abs(*d.BounceRate-3.0/7) > 1e-9 ||
		d.Previous.BounceRate == nil || *d.Previous.BounceRate != 0.5 || d.Reported != 8 || d.TimeOnPage == nil || d.Change.BounceRate == nil {
		t.Errorf("engagement days: the API's summary %+v, want 7 visits (4 before), bounce rate 3/7 (1/2 before), 8 views reported", d)
	}
	if got := elemText(t, b, "c-bounce"); !strings.HasPrefix(got, "▼ −7.1 pts") {
		t.Errorf("engagement days: bounce rate change %q, want ▼ −7.1 pts (3/7 against 1/2)", got)
	}
	rows := checkTabs(t, b, api, "engagement days", q)
	if len(rows["entry_page"]) != 3 || len(rows["exit_page"]) != 3 || rows["exit_page"][0].Value != "/pricing" || rows["exit_page"][0].Exits != 4 {
		t.Errorf("engagement days: the API's entry pages %+v, exit pages %+v; want 3 each, /pricing left from 4 times", rows["entry_page"], rows["exit_page"])
	}

	// The tabs by keyboard: arrows move (and wrap), Home and End jump; the
	// selected tab alone is in the tab order, its panel alone shown.
	if got := tabState(t, b); !slices.Equal(got, wantTabs(0, false)) {
		t.Errorf("tabs at first = %q, want %q", got, wantTabs(0, false))
	}
	evalJS[bool](t, b, `(document.getElementById('tab-page').focus(), true)`)
	for _, k := range []struct {
		key  string
		want int
	}{{kb.ArrowRight, 1}, {kb.ArrowRight, 2}, {kb.ArrowRight, 0}, {kb.ArrowLeft, 2}, {kb.Home, 0}, {kb.End, 2}} {
		pressKey(t, b, k.key)
		if got := tabState(t, b); !slices.Equal(got, wantTabs(k.want, true)) {
			t.Errorf("tabs after %q = %q, want %q", k.key, got, wantTabs(k.want, true))
		}
	}
	b.do(t, "click the entry pages", chromedp.Click(chromedp.ID("tab-entry_page")))
	if got := tabState(t, b); !slices.Equal(got, wantTabs(1, true)) {
		t.Errorf("tabs after a click on entry pages = %q, want %q", got, wantTabs(1, true))
	}
	b.screenshot(t, "dashboard-engagement.png")

	// Each tab's CSV is the API's, for the range, of the whole site.
	dl := b.allowDownloads(t)
	calls(t, b, "")
	for i, by := range []string{"entry_page", "exit_page", "page"} {
		if i > 0 {
			b.do(t, "tab "+by, chromedp.Click(chromedp.ID("tab-"+by)))
		}
		if label := evalJS[string](t, b, `document.querySelector('#pages .csv').getAttribute('aria-label')`); label != map[string]string{"page": "Pages as CSV", "entry_page": "Entry pages as CSV", "exit_page": "Exit pages as CSV"}[by] {
			t.Errorf("CSV button of tab %s: aria-label %q", by, label)
		}
		b.do(t, by+" as CSV", chromedp.Click(chromedp.CSS(`#pages .csv`)))
		got := downloaded(t, filepath.Join(dl, fmt.Sprintf("dash.example-%s-%s-%s.csv", by, from, to)))
		if want := api.csv(t, "breakdown", cloneWith(q, "by", by, "limit", "1000")); !equalRows(got, want) {
			t.Errorf("%s CSV = %q, want the API's %q", by, got, want)
		}
	}
	for _, c := range calls(t, b, "/stats/breakdown") {
		if by := c.Query.Get("by"); c.Query.Get("format") != "csv" || c.Query.Get("limit") != "1000" || c.Query.Get("page") != "" || c.Query.Get("from") != from {
			t.Errorf("CSV of %s asked %s", by, c.Query.Encode())
		}
	}

	// A page picked in the entry pages: the tiles are the page's (its
	// views' engagement, the visits that entered on it), the page ranking
	// its own row; entry and exit pages stay the site's, the page marked.
	b.do(t, "tab entry_page", chromedp.Click(chromedp.ID("tab-entry_page")))
	pick := rows["entry_page"][0].Value
	b.do(t, "filter by "+pick, chromedp.Click(chromedp.CSS(`#panel-entry_page td.v button[title="Show only `+pick+`"]`)))
	load = b.waitLoaded(t, load)
	if got := elemText(t, b, "filter-page"); got != pick {
		t.Errorf("picked %s in the entry pages: filter %q", pick, got)
	}
	pq := cloneWith(q, "page", pick)
	pd := checkTiles(t, b, api, "filtered to "+pick, pq)
	checkTabs(t, b, api, "filtered to "+pick, pq)
	if pd.Visits != rows["entry_page"][0].Visits {
		t.Errorf("filtered to %s: %d visits, the entry pages' row says %d", pick, pd.Visits, rows["entry_page"][0].Visits)
	}
	if got := tabState(t, b); len(got) != 3 || !strings.HasPrefix(got[1], "tab-entry_page true") {
		t.Errorf("after picking a page the tabs are %q: the entry pages should stay selected", got)
	}
	b.do(t, "clear the filter", chromedp.Click(chromedp.ID("filter-clear")))
	load = b.waitLoaded(t, load)

	// Nothing at all: every figure but the visits is a dash, and says why.
	empty := dd.date(10)
	load = pickCustom(t, b, empty, empty, load)
	e := checkTiles(t, b, api, "an empty day", days(empty, empty))
	if e.Visits != 0 || e.BounceRate != nil || e.TimeOnPage != nil {
		t.Errorf("an empty day: the API's summary %+v, want nothing", e)
	}
	checkTabs(t, b, api, "an empty day", days(empty, empty))
	b.do(t, "back to the pages", chromedp.Click(chromedp.ID("tab-page")))
	return load
}
