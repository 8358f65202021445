//go:build !race

package browser

import (
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// checkTheme: the dashboard follows the system's colour scheme (Chromium
// told prefers-color-scheme), and the theme button overrides it, light or
// dark, for this browser across a reload, back to the system's after a
// third click; each click draws the dashboard again. Returns the last
// load, the theme back at auto and the system's scheme light.
func checkTheme(t *testing.T, b *browser, load string) string {
	scheme := func(s string) {
		t.Helper()
		if _, err := chromedp.Call(b.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: s}},
		}); err != nil {
			t.Fatalf("emulate prefers-color-scheme: %s: %v", s, err)
		}
	}
	const dark, light = "rgb(17, 20, 25)", "rgb(246, 247, 249)" // --bg's two sides
	look := func() [3]string {
		v := evalJS[[]string](t, b, `[getComputedStyle(document.documentElement).backgroundColor,
  getComputedStyle(document.body).color, document.getElementById('theme').textContent]`)
		return [3]string{v[0], v[1], v[2]}
	}
	click := func(want string) {
		t.Helper()
		b.do(t, "theme "+want, chromedp.Click(chromedp.ID("theme")))
		load = b.waitLoaded(t, load)
		if got := look()[2]; got != "Theme: "+want {
			t.Errorf("after a click the button reads %q, want Theme: %s", got, want)
		}
	}
	scheme("dark")
	load = b.waitLoaded(t, load) // the system's change draws the charts again
	if got := look(); got[0] != dark || got[2] != "Theme: auto" {
		t.Errorf("system dark, theme auto: background %s, button %q; want %s, Theme: auto", got[0], got[2], dark)
	}
	b.screenshot(t, "dashboard-dark.png")
	scheme("light")
	load = b.waitLoaded(t, load)
	if got := look(); got[0] != light {
		t.Errorf("system light, theme auto: background %s, want %s", got[0], light)
	}
	click("dark")
	if got := look(); got[0] != dark {
		t.Errorf("system light, theme dark: background %s, want %s", got[0], dark)
	}
	b.do(t, "reload", chromedp.Reload())
	load = b.waitLoaded(t, "")
	if got := look(); got[0] != dark || got[2] != "Theme: dark" {
		t.Errorf("reloaded: background %s, button %q; want the chosen dark", got[0], got[2])
	}
	scheme("dark")
	click("light")
	if got := look(); got[0] != light {
		t.Errorf("system dark, theme light: background %s, want %s", got[0], light)
	}
	click("auto")
	if got := look(); got[0] != dark {
		t.Errorf("system dark, theme auto again: background %s, want %s", got[0], dark)
	}
	scheme("light")
	return b.waitLoaded(t, load)
}
