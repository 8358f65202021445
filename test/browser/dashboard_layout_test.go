//go:build !race

package browser

import (
	"slices"
	"testing"

	"github.com/chromedp/chromedp"
)

// checkLayout: the breakdowns sit in four tabbed cards (issue 23). The
// Sources card's Referrers tab shows referrers and hides sources, and
// lands in the URL beside the Pages card's tab; a reload shows the same
// tabs. On a 390×844 phone the tiles sit two a row and every card folds
// and unfolds from its head. Returns the last load (it reloads).
func checkLayout(t *testing.T, b *browser) string {
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
