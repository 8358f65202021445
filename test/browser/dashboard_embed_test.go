//go:build !race

package browser

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestDashboardEmbed: a share link shows in a frame of the origins the
// site allows (issue 23), and nowhere else. Two pages on other origins
// frame the same share link with ?theme=dark: the allowed one's frame
// runs the dashboard (its calls to the stats API arrive), the other's is
// refused by the browser (frame-ancestors: Chromium says so in the
// console) and never runs it. Opened directly, ?theme=dark picks the
// dark theme and stays in the URL.
func TestDashboardEmbed(t *testing.T) {
	b := newBrowser(t, 1200, 900)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(*app.Config) {}, time.Now)
	c := apptest.NewClient(t, m)
	const site = "embedded.example"
	token := c.AddSite(site)
	req, _ := http.NewRequest("POST", c.Base+"/v1/sites/"+site+"/share", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	code, body := c.Do(req)
	var share struct{ Token string }
	if err := json.Unmarshal(body, &share); code != http.StatusCreated || err != nil || share.Token == "" {
		t.Fatalf("share: %d %s", code, body)
	}
	// The dashboard through a proxy that notes every request its frame
	// makes (the page's API calls go to its own origin).
	var reqs requestLog
	dash := httptest.NewServer(reqs.handler(c.Base))
	t.Cleanup(dash.Close)
	frame := dash.URL + "/dashboard/" + site + "?theme=dark#share=" + share.Token
	parent := func(host string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><title>%s</title><iframe id="f" src="%s" width="1000" height="700"></iframe>`, host, frame)
		}))
		t.Cleanup(srv.Close)
		_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
		return "http://" + host + ":" + port
	}
	allowed, other := parent("blog.example"), parent("elsewhere.example")
	req, _ = http.NewRequest("PATCH", c.Base+"/v1/sites/"+site+"/settings", strings.NewReader(`{"embed_origins":["`+allowed+`"]}`))
	req.Header.Set("Authorization", "Bearer "+token)
	if code, body := c.Do(req); code != http.StatusOK || !strings.Contains(string(body), allowed) {
		t.Fatalf("set embed_origins: %d %s", code, body)
	}
	summary := "GET /v1/sites/" + site + "/stats/summary"
	called := func() bool {
		reqs.mu.Lock()
		defer reqs.mu.Unlock()
		return slices.ContainsFunc(reqs.seen, func(s string) bool { return strings.HasPrefix(s, summary) })
	}

	b.do(t, "open the allowed page", chromedp.Navigate(allowed))
	apptest.Eventually(t, time.Minute, func() string {
		if !called() {
			return "the framed dashboard has not called the stats API"
		}
		return ""
	})
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("allowed page: console errors %q", errs)
	}

	reqs.mu.Lock()
	reqs.seen = nil
	reqs.mu.Unlock()
	b.do(t, "open another page", chromedp.Navigate(other))
	var refused []string
	apptest.Eventually(t, time.Minute, func() string {
		refused = append(refused, b.consoleErrors()...)
		if !slices.ContainsFunc(refused, func(s string) bool { return strings.Contains(s, "frame-ancestors") }) {
			return fmt.Sprintf("no frame-ancestors refusal yet: %q", refused)
		}
		return ""
	})
	if called() {
		t.Error("the refused frame ran the dashboard: it called the stats API")
	}

	b.do(t, "the dashboard itself, dark", chromedp.Navigate(frame))
	b.waitLoaded(t, "")
	if got := evalJS[string](t, b, `document.documentElement.dataset.theme + ' ' + new URLSearchParams(location.search).get('theme')`); got != "dark dark" {
		t.Errorf("?theme=dark: theme and URL %q, want dark dark", got)
	}
}
