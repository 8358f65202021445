//go:build !race

package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestBadgeImagesInChromium: a creator's page shows the badge in an <img>,
// from another origin. Every badge URL draws a picture there, a refused one
// too (a bad label, a page with a control character, a URL missing its
// site): the SVG answer keeps its 4xx, and Chromium draws an image it can
// decode whatever the status. The control is a JSON 400 (what a refused
// badge answered before): Chromium shows it as a broken image, width 0.
func TestBadgeImagesInChromium(t *testing.T) {
	b := newBrowser(t, 1024, 700)
	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	c.AddSite("example.com")
	api := "http://" + m.Addr()
	imgs := map[string]string{
		"count":      "/badge/example.com.svg?page=/posts/hello",
		"empty":      "/badge/example.com.svg?page=/posts/hello&label=",
		"badlabel":   "/badge/example.com.svg?label=%FF",
		"longlabel":  "/badge/example.com.svg?label=" + strings.Repeat("x", 41),
		"badpage":    "/badge/example.com.svg?page=%00",
		"nosite":     "/badge/",
		"notsvg":     "/badge/example.com.png",
		"jsonbroken": "/v1/sites/example.com/count?page=%00",
	}
	var page strings.Builder
	page.WriteString("<!doctype html><title>badges</title>")
	for id, path := range imgs {
		fmt.Fprintf(&page, `<p><img id=%q alt="" src="%s%s"></p>`, id, api, path)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page.String()))
	}))
	t.Cleanup(srv.Close)
	b.do(t, "load the page", chromedp.Navigate(srv.URL), untilJS(`[...document.images].every(i => i.complete)`))
	for id := range imgs {
		w := evalJS[float64](t, b, `document.getElementById(`+jsString(id)+`).naturalWidth`)
		if id == "jsonbroken" {
			if w != 0 {
				t.Errorf("the control: a JSON 400 drew an image %v px wide; the test tells nothing", w)
			}
			continue
		}
		if w < 40 {
			t.Errorf("%s (%s): naturalWidth %v, want a badge drawn", id, imgs[id], w)
		}
	}
}
