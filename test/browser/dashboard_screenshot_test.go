//go:build !race

package browser

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
)

var screenshotOut = flag.String("screenshot", "", "TestDashboardScreenshot saves the dashboard of a generated history as this PNG (relative paths are from the repository root)")

// TestDashboardScreenshot makes the README's picture of the dashboard: a
// site with a realistic generated history (storetest.History, inserted
// through the real insert path, with visits and engagement reports),
// signed in, 30 days. It runs only when asked for a path:
//
//	go test -count=1 -run TestDashboardScreenshot ./test/browser/ -args -screenshot docs/dashboard.png
//
// (make screenshot does the same). Beside PATH it saves PATH-1440x900.png
// and PATH-390x844.png: a laptop's and a phone's viewport, filtered to
// one source.
func TestDashboardScreenshot(t *testing.T) {
	if *screenshotOut == "" {
		t.Skip("no -screenshot PATH given")
	}
	out := *screenshotOut
	if !filepath.IsAbs(out) {
		out = filepath.Join("..", "..", out) // go test runs in test/browser
	}
	requireChromium(t)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.Validate.Rules.SettleWindow = -1 }, time.Now)
	c := apptest.NewClient(t, m)
	const site = "blog.example"
	token := c.AddSite(site)
	req, _ := http.NewRequest("PATCH", c.Base+"/v1/admin/sites/"+site, strings.NewReader(`{"timezone":"Europe/Berlin"}`))
	req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	if code, body := c.Do(req); code != http.StatusOK {
		t.Fatalf("set time zone: %d %s", code, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tot, err := storetest.History(ctx, m.Store, storetest.HistoryConfig{
		Events: 2_000_000, Days: 60, Sites: []string{site}, Pages: 300, Visitors: 12_000, Seed: 10, Visits: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("history: %d events, %d valid, %d engagement reports, in %s", tot.Events, tot.Valid, tot.Reports, tot.Elapsed)
	// Accepted reports are valid rows too: wait for the live hits beyond
	// what the history stored.
	stored := apptest.Reasons(t, m, site)["valid"]

	// A few people on the site right now, through the real ingest path, so
	// the realtime tile shows visitors (the history ended minutes ago).
	const live = 23
	for i := range live {
		h := apptest.Hit{IP: apptest.VisitorIP(5000 + i), UA: []string{apptest.ChromeUA, apptest.FirefoxUA, apptest.SafariUA}[i%3], Site: site, Page: fmt.Sprintf("/posts/%d", 1+i%5)}
		if code := c.Send(h); code != http.StatusOK {
			t.Fatalf("live hit: status %d", code)
		}
	}
	apptest.Eventually(t, time.Minute, func() string {
		if got := apptest.Reasons(t, m, site)["valid"]; got != stored+live {
			return fmt.Sprintf("valid rows %d, want %d", got, stored+live)
		}
		return ""
	})

	b := newBrowser(t, 1400, 1800)
	b.do(t, "sign in",
		chromedp.Navigate(c.Base+"/dashboard/"+site),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	load := b.waitLoaded(t, "")
	b.do(t, "30 days", chromedp.Click(chromedp.CSS(`label:has(input[value="30d"])`)))
	b.waitLoaded(t, load)
	if got := elemText(t, b, "t-views"); got == "0" || got == "–" {
		t.Fatalf("dashboard shows %q views for the generated history", got)
	}
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved %s (%d bytes)", out, len(png))
	// What a person sees on a laptop and on a phone (issue 23): the
	// viewport alone, beside the whole page above, with a filter on.
	for _, v := range []struct {
		w, h   int64
		mobile bool
	}{{1440, 900, false}, {390, 844, true}} {
		opts := []chromedp.EmulateViewportOption{}
		if v.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateScale(2))
		}
		b.do(t, fmt.Sprintf("%dx%d", v.w, v.h), chromedp.EmulateViewport(v.w, v.h, opts...),
			chromedp.Navigate(c.Base+"/dashboard/"+site+"?range=30d&filter=source%3D%3DGoogle"))
		b.waitLoaded(t, "")
		shot, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(out, ".png") + fmt.Sprintf("-%dx%d.png", v.w, v.h)
		if err := os.WriteFile(name, shot, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("saved %s (%d bytes)", name, len(shot))
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
