//go:build !race

package browser

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// checkLayout: the breakdowns sit in four tabbed cards (issue 23). The
// Sources card's Referrers tab shows referrers and hides sources, and
// lands in the URL beside the Pages card's tab; a reload shows the same
// tabs. On a 390×844 phone the tiles sit two a row and every card folds
// and unfolds from its head. Returns the last load (it reloads).
func checkLayout(t *testing.T, b *browser, api statsAPI, dd dashDays) string {
	cards := evalJS[[]string](t, b, `[...document.querySelectorAll('#panels > .card')].map(c => c.id)`)
	if want := []string{"pages", "sources", "places", "devices"}; !slices.Equal(cards, want) {
		t.Errorf("cards %q, want %q", cards, want)
	}
	shown := func() []string {
		return evalJS[[]string](t, b, `[...document.querySelectorAll('#panels [id^=panel-]')].filter(p => !p.hidden).map(p => p.id)`)
	}
	if want := []string{"panel-page", "panel-source", "panel-country", "panel-browser"}; !slices.Equal(shown(), want) {
		t.Errorf("panels shown %q, want each card's first %q", shown(), want)
	}
	b.do(t, "the Referrers tab", chromedp.Click(chromedp.ID("tab-referrer")))
	b.do(t, "the Exit pages tab", chromedp.Click(chromedp.ID("tab-exit_page")))
	want := []string{"panel-exit_page", "panel-referrer", "panel-country", "panel-browser"}
	if !slices.Equal(shown(), want) {
		t.Errorf("after picking two tabs, panels shown %q, want %q", shown(), want)
	}
	if got := evalJS[[]string](t, b, `new URLSearchParams(location.search).getAll('tab')`); !slices.Equal(got, []string{"exit_page", "referrer"}) {
		t.Errorf("URL tabs %q, want exit_page, referrer", got)
	}
	b.do(t, "reload", chromedp.Reload())
	load := b.waitLoaded(t, "")
	if !slices.Equal(shown(), want) {
		t.Errorf("reloaded: panels shown %q, want %q", shown(), want)
	}
	b.do(t, "back to the first tabs", chromedp.Click(chromedp.ID("tab-source")), chromedp.Click(chromedp.ID("tab-page")))

	// The Countries card's map: every country with views is filled, its
	// title the API's views for it; a click filters by it.
	b.do(t, "the Map tab", chromedp.Click(chromedp.ID("tab-map")), untilJS(`document.querySelectorAll('#panel-map path').length > 150`))
	var bd struct {
		Rows []struct {
			Value string
			Views uint64
		}
	}
	month := days(dd.today.AddDate(0, 0, -29).Format(time.DateOnly), dd.today.Format(time.DateOnly))
	api.json(t, "breakdown", cloneWith(month, "by", "country", "limit", "300"), &bd)
	b.screenshot(t, "dashboard-map.png")
	seen := evalJS[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll('#panel-map path.seen')].map(p => [p.dataset.country, p.querySelector('title').textContent]))`)
	n := 0
	for _, r := range bd.Rows {
		if len(r.Value) != 2 {
			continue // (unknown): no place on a map
		}
		n++
		if got := seen[r.Value]; !strings.HasSuffix(got, fmt.Sprintf(": %d views", r.Views)) {
			t.Errorf("map: %s titled %q, want its %d views", r.Value, got, r.Views)
		}
	}
	if n == 0 || len(seen) != n {
		t.Errorf("map: %d countries filled %q, the API has %d", len(seen), seen, n)
	}
	for code := range seen {
		b.do(t, "click "+code, chromedp.Click(chromedp.CSS(`#panel-map path[data-country="`+code+`"]`)))
		load = b.waitLoaded(t, load)
		if got := evalJS[[]string](t, b, `new URLSearchParams(location.search).getAll('filter')`); !slices.Equal(got, []string{"country==" + code}) {
			t.Errorf("a click on %s: filters %q", code, got)
		}
		b.do(t, "remove the chip", chromedp.Click(chromedp.CSS(`#chips .chip button`)))
		load = b.waitLoaded(t, load)
		break
	}
	b.do(t, "the Countries tab", chromedp.Click(chromedp.ID("tab-country")))

	// Channels, read when their tab is shown: the API's for the range.
	chRows := api.panelRows(t, cloneWith(month, "by", "channel"))
	b.do(t, "the Channels tab", chromedp.Click(chromedp.ID("tab-channel")),
		untilJS(`document.querySelectorAll('#panel-channel tbody tr:not(.empty)').length === `+fmt.Sprint(len(chRows))))
	if got := tableRows(t, b, "#panel-channel"); len(chRows) == 0 || !equalRows(got, chRows) {
		t.Errorf("Channels %q, the API's %q", got, chRows)
	}
	b.do(t, "the Sources tab", chromedp.Click(chromedp.ID("tab-source")))

	// The Pages card's detail view: 20 pages a page with the pager, then a
	// search (the API's contains filter), then a pick.
	var pages struct {
		Rows        []struct{ Value string }
		TotalValues int `json:"total_values"`
	}
	api.json(t, "breakdown", cloneWith(month, "by", "page", "limit", "20"), &pages)
	b.do(t, "the pages' details", chromedp.Click(chromedp.CSS(`#pages .more`)),
		untilJS(`document.querySelectorAll('#detail tbody tr').length === `+fmt.Sprint(len(pages.Rows))))
	detailValues := func() []string {
		return evalJS[[]string](t, b, `[...document.querySelectorAll('#detail tbody td.v button')].map(b => b.textContent)`)
	}
	var names []string
	for _, r := range pages.Rows {
		names = append(names, r.Value)
	}
	if got := detailValues(); !slices.Equal(got, names) || pages.TotalValues <= 20 {
		t.Errorf("details: %q, the API's first 20 of %d: %q", got, pages.TotalValues, names)
	}
	b.do(t, "the next 20", chromedp.Click(chromedp.CSS(`#detail .next`)),
		untilJS(`document.querySelector('#detail .range').textContent.startsWith('21–')`))
	var search struct{ Rows []struct{ Value string } }
	api.json(t, "breakdown", cloneWith(cloneWith(month, "by", "page", "limit", "20"), "filter", "page~P/0"), &search)
	b.do(t, "search p/0", chromedp.SendKeys(chromedp.ID("detail-search"), "P/0"),
		untilJS(`document.querySelector('#detail .range').textContent.startsWith('1–') && document.querySelectorAll('#detail tbody tr').length === `+fmt.Sprint(len(search.Rows))))
	names = names[:0]
	for _, r := range search.Rows {
		names = append(names, r.Value)
	}
	if got := detailValues(); len(names) == 0 || !slices.Equal(got, names) {
		t.Errorf("details searched for P/0: %q, the API's %q", got, names)
	}
	b.do(t, "pick the first", chromedp.Click(chromedp.CSS(`#detail tbody td.v button`)))
	load = b.waitLoaded(t, load)
	if got := elemText(t, b, "filter-page"); got != names[0] || !evalJS[bool](t, b, `document.getElementById('detail').hidden`) {
		t.Errorf("picked in the details: page filter %q (want %q), details still open", got, names[0])
	}
	b.do(t, "clear the page", chromedp.Click(chromedp.ID("filter-clear")))
	load = b.waitLoaded(t, load)

	b.do(t, "a phone", chromedp.EmulateViewport(390, 844))
	defer b.do(t, "the desktop again", chromedp.EmulateViewport(1400, 1000))
	cols := evalJS[[]int](t, b, `['.tiles', '#panels'].map(s => getComputedStyle(document.querySelector(s)).gridTemplateColumns.split(' ').length)`)
	if !slices.Equal(cols, []int{2, 1}) {
		t.Errorf("on a phone: %v tiles a row and %v cards, want 2 and 1", cols[0], cols[1])
	}
	visible := `document.getElementById('panel-source').offsetParent !== null`
	if !evalJS[bool](t, b, visible) {
		t.Fatal("on a phone: the sources are not shown")
	}
	b.do(t, "fold Sources", chromedp.Click(chromedp.CSS(`#sources .fold`)))
	if evalJS[bool](t, b, visible) || evalJS[string](t, b, `document.querySelector('#sources .fold').getAttribute('aria-expanded')`) != "false" {
		t.Error("folded: the sources still show")
	}
	b.do(t, "unfold Sources", chromedp.Click(chromedp.CSS(`#sources .fold`)))
	if !evalJS[bool](t, b, visible) {
		t.Error("unfolded: the sources do not show")
	}
	b.screenshot(t, "dashboard-phone.png")
	return load
}
