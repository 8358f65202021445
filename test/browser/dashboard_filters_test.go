//go:build !race

package browser

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// checkFilters: filters on any dimension (issue 23). Over 30 days, a click
// on the Google row of Sources adds the filter source==Google, and the
// filter form adds country != the first country left; both show as chips
// and land in the URL, and the tiles and the Browsers table are the stats
// API's answer for the same filters. A reload shows the same view; Back
// removes the country filter (the numbers are the API's for Google alone)
// and Forward brings it back; each chip's ✕ removes its filter. Returns
// the last load, with no filter left.
func checkFilters(t *testing.T, b *browser, api statsAPI, dd dashDays, load string) string {
	load = pickRange(t, b, "30d", load)
	month := days(dd.today.AddDate(0, 0, -29).Format(time.DateOnly), dd.today.Format(time.DateOnly))
	b.do(t, "filter by Google", chromedp.Click(chromedp.CSS(`#panel-source td.v button[title="Show only Google"]`)))
	load = b.waitLoaded(t, load)
	// A row's value is its button's title (the cell may name the country).
	countries := evalJS[[]string](t, b, `[...document.querySelectorAll('#panel-country td.v button')].map(b => b.title.replace('Show only ', ''))`)
	if len(countries) == 0 {
		t.Fatal("no country under source==Google")
	}
	country := countries[0]
	b.do(t, "add country != "+country,
		chromedp.Click(chromedp.CSS(`#add-filter summary`)),
		chromedp.SetValue(chromedp.ID("f-dim"), "country"),
		chromedp.SetValue(chromedp.ID("f-op"), "!="),
		chromedp.SendKeys(chromedp.ID("f-val"), country),
		chromedp.Click(chromedp.CSS(`#filter-form button[type=submit]`)),
	)
	b.waitLoaded(t, load) // the reload below starts the count again
	both := []string{"source==Google", "country!=" + country}
	if got, want := evalJS[[]string](t, b, `new URLSearchParams(location.search).getAll('filter')`), both; !slices.Equal(got, want) {
		t.Errorf("URL filters %q, want %q", got, want)
	}
	chips := func() []string {
		return evalJS[[]string](t, b, `[...document.querySelectorAll('#chips .chip')].map(c => c.textContent.replace('✕', '').trim())`)
	}
	if got, want := chips(), []string{"Source is Google", "Country is not " + country}; !slices.Equal(got, want) {
		t.Errorf("chips %q, want %q", got, want)
	}
	filtered := func(fs ...string) url.Values {
		q := cloneWith(month)
		q["filter"] = fs
		return q
	}
	matchesAPI := func(when string, q url.Values) {
		t.Helper()
		var sum struct {
			Views, Uniques uint64
			Filtered       *uint64
		}
		api.json(t, "summary", q, &sum)
		if got := []string{elemText(t, b, "t-views"), elemText(t, b, "t-uniques"), elemText(t, b, "t-filtered")}; !slices.Equal(got, []string{count(sum.Views), count(sum.Uniques), "—"}) {
			t.Errorf("%s: tiles views, uniques, filtered %q; the API's summary for %v: %d %d %v", when, got, q, sum.Views, sum.Uniques, sum.Filtered)
		}
		want := api.panelRows(t, cloneWith(q, "by", "browser"))
		if got := tableRows(t, b, "#panel-browser"); !equalRows(got, want) && !(len(want) == 0 && len(got) == 1) {
			t.Errorf("%s: Browsers %q, the API's %q", when, got, want)
		}
	}
	matchesAPI("two filters", filtered(both...))
	t.Logf("filters %q: %s views", both, elemText(t, b, "t-views"))

	view := func() []string {
		return append(chips(), elemText(t, b, "t-views"), elemText(t, b, "t-uniques"),
			evalJS[string](t, b, `document.getElementById('panel-browser').innerText`))
	}
	before := view()
	b.do(t, "reload", chromedp.Reload())
	load = b.waitLoaded(t, "")
	if after := view(); !slices.Equal(after, before) {
		t.Errorf("after a reload the view is\n%q\nwant as before\n%q", after, before)
	}
	evalJS[bool](t, b, `history.back(), true`)
	load = b.waitLoaded(t, load)
	if got := chips(); !slices.Equal(got, []string{"Source is Google"}) {
		t.Errorf("back: chips %q, want Google's alone", got)
	}
	matchesAPI("back", filtered(both[0]))
	evalJS[bool](t, b, `history.forward(), true`)
	load = b.waitLoaded(t, load)
	if got := view(); !slices.Equal(got, before) {
		t.Errorf("forward: %q, want %q", got, before)
	}
	for range both {
		b.do(t, "remove a chip", chromedp.Click(chromedp.CSS(`#chips .chip button`)))
		load = b.waitLoaded(t, load)
	}
	if got := evalJS[string](t, b, `location.search`); strings.Contains(got, "filter") || len(chips()) != 0 {
		t.Errorf("every chip removed: URL %q, chips %q", got, chips())
	}
	return load
}
