//go:build !race

package browser

import (
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// checkURLState: the view lives in the URL (issue 23). The 30-day range,
// a page filter picked from the Pages card and its Entry pages tab land
// in the query; a reload shows the same view with the same numbers, which
// are the stats API's for that range and page; Back undoes the tab, then
// the filter, and Forward brings the filter back. A URL with values no
// control offers reads as the defaults. Returns the last load, with the
// dashboard back at its default view (no query).
func checkURLState(t *testing.T, b *browser, api statsAPI, dd dashDays, dash, load string) string {
	load = pickRange(t, b, "30d", load)
	b.do(t, "filter by the top page", chromedp.Click(chromedp.CSS(`#panel-page td.v button`)))
	b.waitLoaded(t, load) // the reload below starts the count again
	page := elemText(t, b, "filter-page")
	b.do(t, "the Entry pages tab", chromedp.Click(chromedp.ID("tab-entry_page")))
	search := evalJS[string](t, b, `location.search`)
	if want := "?range=30d&page=" + url.QueryEscape(page) + "&tab=entry_page"; search != want {
		t.Errorf("URL query %q, want %q", search, want)
	}
	// What the view shows: the range picked, the filter, the tab, the
	// tiles, the tables.
	view := func() []string {
		return evalJS[[]string](t, b, `[
  document.querySelector('input[name=range]:checked').value,
  document.getElementById('filter').hidden ? '' : document.getElementById('filter-page').textContent,
  document.querySelector('[role=tab][aria-selected=true]').id,
  ...['t-views', 't-uniques', 't-filtered', 't-visits'].map(id => document.getElementById(id).textContent),
  document.getElementById('panel-entry_page').innerText,
  document.getElementById('panel-source').innerText,
]`)
	}
	before := view()
	b.do(t, "reload", chromedp.Reload())
	load = b.waitLoaded(t, "")
	if after := view(); !slices.Equal(after, before) {
		t.Errorf("after a reload the view is\n%q\nwant as before\n%q", after, before)
	}
	month := cloneWith(days(dd.today.AddDate(0, 0, -29).Format(time.DateOnly), dd.today.Format(time.DateOnly)), "page", page)
	var sum struct{ Views uint64 }
	api.json(t, "summary", month, &sum)
	if got := elemText(t, b, "t-views"); got != strconv.FormatUint(sum.Views, 10) {
		t.Errorf("reloaded: %s views on the tile, the API's summary for %v says %d", got, month, sum.Views)
	}
	checkTiles(t, b, api, "reloaded", month)

	evalJS[bool](t, b, `history.back(), true`)
	load = b.waitLoaded(t, load)
	if v := view(); v[2] != "tab-page" || v[1] != page {
		t.Errorf("back once: tab %s, filter %q; want tab-page, %q", v[2], v[1], page)
	}
	evalJS[bool](t, b, `history.back(), true`)
	load = b.waitLoaded(t, load)
	if v := view(); v[0] != "30d" || v[1] != "" {
		t.Errorf("back twice: range %s, filter %q; want 30d, none", v[0], v[1])
	}
	api.json(t, "summary", cloneWith(month, "page", ""), &sum)
	if got := elemText(t, b, "t-views"); got != strconv.FormatUint(sum.Views, 10) {
		t.Errorf("back twice: %s views, the API's 30 days %d", got, sum.Views)
	}
	evalJS[bool](t, b, `history.forward(), true`)
	b.waitLoaded(t, load) // the navigation below starts the count again
	if v := view(); v[1] != page || v[0] != "30d" {
		t.Errorf("forward: range %s, filter %q; want 30d, %q", v[0], v[1], page)
	}

	// Values no control offers: the defaults (7 days, no filter, the
	// Pages tab, views on the chart).
	b.do(t, "a URL of nonsense", chromedp.Navigate(dash+"?range=1y&from=x&interval=week&metric=<b>&page=nope&tab=admin"))
	load = b.waitLoaded(t, "")
	if v := view(); v[0] != "7d" || v[1] != "" || v[2] != "tab-page" {
		t.Errorf("nonsense URL: range %s, filter %q, tab %s; want the defaults", v[0], v[1], v[2])
	}
	if got := evalJS[string](t, b, `location.search + '|' + document.getElementById('metric').value`); got != "|views" {
		t.Errorf("nonsense URL: query|metric %q, want the defaults' (none|views)", got)
	}
	return load
}
