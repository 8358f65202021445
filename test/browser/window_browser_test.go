//go:build !race

package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestTrackerWindowSize: vc.js reports the browser window's outer size as
// it is once the page has drawn, and as unknown when it cannot tell, so
// no person's view is judged by a window that was not laid out yet.
//
// Measured on Chromium 156, headful under Xvfb as much as headless,
// outerWidth × outerHeight read 0 × 0 at script start on a fifth to a
// third of cross-site navigations (more than half on a loaded box), and
// never at the page's first frame
// (docs/invalid-traffic.md). The test drives Chromium with its default
// features (RenderDocument on):
//
//   - 24 navigations alternating between two sites' hosts, each a new
//     document in a new renderer: every beacon reports a window, none
//     0 × 0, and every view counts;
//   - pages that make the window read 0 × 0 until their first frame, as
//     those navigations do: the beacon (and the fetch that carries a view
//     on a page showing its count) reports the window the frame has;
//   - a page in the background (hidden, no frames) and a visible page
//     that draws no frame for a second: the view is sent, without a
//     window.
func TestTrackerWindowSize(t *testing.T) {
	exe := vcjsChromium(t)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) {
		c.Validate.Rules.SettleWindow = -1 // one browser, many views a minute: not held
	}, time.Now)
	c := apptest.NewClient(t, m)
	sites := []string{"example.com", "example.org"}
	for _, s := range sites {
		c.AddSite(s)
	}
	var reqs requestLog
	vc := httptest.NewServer(reqs.handler("http://" + m.Addr()))
	t.Cleanup(vc.Close)

	// What each mode does to the page before vc.js runs, as a browser
	// would: the window unsized until the first frame (the page's own
	// rAF callback runs before the tracker's, registered later), hidden
	// in a background tab, or drawing no frame.
	modes := map[string]string{
		"real": "",
		"unsized": `var drawn = 0, w = outerWidth || 1111, h = outerHeight || 777;
			requestAnimationFrame(function () { drawn = 1; });
			Object.defineProperty(window, 'outerWidth', { get: function () { return drawn ? w : 0; } });
			Object.defineProperty(window, 'outerHeight', { get: function () { return drawn ? h : 0; } });`,
		"hidden": `Object.defineProperty(document, 'hidden', { get: function () { return true; } });
			Object.defineProperty(document, 'visibilityState', { get: function () { return 'hidden'; } });
			window.requestAnimationFrame = function () {};
			Object.defineProperty(window, 'outerWidth', { get: function () { return 0; } });
			Object.defineProperty(window, 'outerHeight', { get: function () { return 0; } });`,
		"noframe": `window.requestAnimationFrame = function () {};
			Object.defineProperty(window, 'outerWidth', { get: function () { return 0; } });
			Object.defineProperty(window, 'outerHeight', { get: function () { return 0; } });`,
	}
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /w/<mode>/<n>[/count]: a page of the site whose host it is on.
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/w/"), "/")
		script, ok := modes[parts[0]]
		if !ok || len(parts) < 2 {
			http.NotFound(w, r)
			return
		}
		site := strings.TrimPrefix(strings.Split(r.Host, ":")[0], "www.")
		count := ""
		if len(parts) > 2 && parts[2] == "count" {
			count = `<span data-vc-count></span>`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>%s</title><script>%s</script>`+
			`<script defer src="%s/vc.js" data-site="%s"></script><p>%s</p>%s`, r.URL.Path, script, vc.URL, site, r.URL.Path, count)
	}))
	t.Cleanup(pages.Close)
	host := func(site string) string { return strings.Replace(pages.URL, "127.0.0.1", "www."+site, 1) }
	bctx, setUA := personChromium(t, exe,
		chromedp.Flag("host-resolver-rules", "MAP www.example.com 127.0.0.1, MAP www.example.org 127.0.0.1"))
	if err := chromedp.Do(bctx, setUA); err != nil {
		t.Fatal(err)
	}

	// Each case: the page loaded, and whether its beacon must report a
	// window (true) or none (false).
	type load struct {
		url    string
		page   string
		window bool
	}
	var loads []load
	for i := range 24 {
		site := sites[i%2]
		page := fmt.Sprintf("/w/real/%d", i)
		loads = append(loads, load{host(site) + page, page, true})
	}
	for _, p := range []string{"/w/unsized/0", "/w/unsized/1/count", "/w/hidden/0", "/w/hidden/1/count", "/w/noframe/0"} {
		loads = append(loads, load{host(sites[0]) + p, p, strings.HasPrefix(p, "/w/unsized/")})
	}
	for _, l := range loads {
		if err := chromedp.Do(bctx, chromedp.Navigate(l.url)); err != nil {
			t.Fatalf("%s: %v", l.url, err)
		}
		// The view is sent before the next navigation: the noframe page's
		// after its second.
		apptest.Eventually(t, 15*time.Second, func() string {
			if len(reqs.beacons(l.page)) == 0 {
				return fmt.Sprintf("no beacon for %s among %q", l.page, reqs.all())
			}
			return ""
		})
	}

	for _, l := range loads {
		bodies := reqs.beacons(l.page)
		if len(bodies) != 1 {
			t.Errorf("%s: %d beacons, want 1: %q", l.page, len(bodies), bodies)
			continue
		}
		var b struct {
			Hints map[string]any `json:"hints"`
		}
		if err := json.Unmarshal([]byte(bodies[0]), &b); err != nil {
			t.Fatalf("%s: beacon %q: %v", l.page, bodies[0], err)
		}
		ow, hasW := b.Hints["ow"].(float64)
		oh, hasH := b.Hints["oh"].(float64)
		switch {
		case l.window && (!hasW || !hasH || ow == 0 || oh == 0):
			t.Errorf("%s: hints %v, want the window's size", l.page, b.Hints)
		case !l.window && (hasW || hasH):
			t.Errorf("%s: hints %v, want no window (unknown)", l.page, b.Hints)
		}
	}
	// Every view counts: none is judged by its window.
	for i, s := range sites {
		want := uint64(12)
		if i == 0 {
			want += 5
		}
		apptest.Eventually(t, 30*time.Second, func() string {
			if r := apptest.Reasons(t, m, s); r["valid"] != want || len(r) != 1 {
				res, err := m.Store.Query(context.Background(), queries.Text("raw_signals"), store.Params{"site": s})
				if err != nil {
					return err.Error()
				}
				return fmt.Sprintf("%s: verdicts %v, want %d valid and nothing else; stored %v", s, r, want, res.TextRows())
			}
			return ""
		})
	}
}
