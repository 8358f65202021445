package app

import (
	"encoding/json"
	"fmt"
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
		tweak func(*Config)
	}{
		{"stored, not fed", func(c *Config) { c.FeedEvery = time.Hour }},
		{"not stored", func(c *Config) { c.FlushEvery = time.Hour }},
	} {
		t.Run(c.name, func(t *testing.T) {
			const site = "pending.example"
			m := StartWith(t, t.TempDir(), NewDB(), c.tweak, time.Now)
			cl := NewClient(t, m)
			cl.AddSite(site)
			for i := range 5 {
				page := "/p"
				if i == 4 {
					page = "/q"
				}
				if code := cl.Send(Hit{IP: VisitorIP(i), UA: FirefoxUA, Site: site, Page: page}); code != http.StatusOK {
					t.Fatalf("hit: %d", code)
				}
			}
			Eventually(t, 30*time.Second, func() string {
				_, p, _ := cl.Count(site, "/p")
				s := siteCount(t, cl, site)
				if p.Views != 0 || p.Pending != 4 || s.Pending != 5 {
					return fmt.Sprintf("/p %d views %d pending, site %d pending; want 0, 4, 5", p.Views, p.Pending, s.Pending)
				}
				return ""
			})
			m.Close() // flushes and feeds what waits
			m = StartWith(t, m.cfg.Data, m.cfg.Database, nil, time.Now)
			cl = NewClient(t, m)
			Eventually(t, 30*time.Second, func() string {
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
func siteCount(t *testing.T, c *Client, site string) CountBody {
	t.Helper()
	resp, err := c.HTTP.Get(c.Base + "/v1/sites/" + site + "/count")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out CountBody
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
