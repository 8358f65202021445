package e2e

import (
	"encoding/json"
	"fmt"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
	"net/http"
	"testing"
	"time"
)

// TestPendingExplainsLag: a public count says what it does not include
// yet. Views stored but not fed to the rollups (a long --feed-every), and
// views still in the stream or waiting in a validator's batch (a long
// --flush-every), are pending on their page and their site; once counted,
// pending is 0.
func TestPendingExplainsLag(t *testing.T) {
	for _, c := range []struct {
		name  string
		tweak func(*app.Config)
	}{
		{"stored, not fed", func(c *app.Config) { c.Validate.Feed.Every = time.Hour }},
		{"not stored", func(c *app.Config) { c.Validate.FlushEvery = time.Hour }},
	} {
		t.Run(c.name, func(t *testing.T) {
			const site = "pending.example"
			m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), c.tweak, time.Now)
			cl := apptest.NewClient(t, m)
			cl.AddSite(site)
			for i := range 5 {
				page := "/p"
				if i == 4 {
					page = "/q"
				}
				if code := cl.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.FirefoxUA, Site: site, Page: page}); code != http.StatusOK {
					t.Fatalf("hit: %d", code)
				}
			}
			apptest.Eventually(t, 30*time.Second, func() string {
				_, p, _ := cl.Count(site, "/p")
				s := siteCount(t, cl, site)
				if p.Views != 0 || p.Pending != 4 || s.Pending != 5 {
					return fmt.Sprintf("/p %d views %d pending, site %d pending; want 0, 4, 5", p.Views, p.Pending, s.Pending)
				}
				return ""
			})
			m.Close() // flushes and feeds what waits
			m = apptest.StartWith(t, m.Config.Data, m.Config.Store.Database, nil, time.Now)
			cl = apptest.NewClient(t, m)
			apptest.Eventually(t, 30*time.Second, func() string {
				_, p, _ := cl.Count(site, "/p")
				if p.Views != 4 || p.Pending != 0 {
					return fmt.Sprintf("/p %d views %d pending after the restart; want 4, 0", p.Views, p.Pending)
				}
				return ""
			})
		})
	}
}

// siteCount reads the site's whole count (/count without page).
func siteCount(t *testing.T, c *apptest.Client, site string) apptest.CountBody {
	t.Helper()
	resp, err := c.HTTP.Get(c.Base + "/v1/sites/" + site + "/count")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out apptest.CountBody
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
