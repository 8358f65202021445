package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLagIsEachSitesAndZeroAtRest: "counting behind by" tells the truth.
// Found on the dashboard: 124.9 s behind at rest, on a brand-new site with
// no views, and Grafana's validator lag panel read the same: both showed
// the receive-to-rollup time of the process's last feed, which had carried
// views held for settling (2 min), and kept it until the next feed. Now a
// site's lag is the age of its oldest event not counted yet, 0 when it has
// none; the gauge is the validators' oldest not counted, 0 at rest.
func TestLagIsEachSitesAndZeroAtRest(t *testing.T) {
	t.Run("held for settling, then at rest", func(t *testing.T) {
		m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.Validate.Rules.SettleWindow = 3 * time.Second }, time.Now)
		c := apptest.NewClient(t, m)
		busy, idle := c.AddSite("busy.example"), c.AddSite("new.example")
		// One visitor's views in a burst: past a sixth of the rate limit the
		// validator watches it, and holds its views for the settle window.
		for i := range 10 {
			if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(1), UA: apptest.FirefoxUA, Site: "busy.example", Page: fmt.Sprintf("/p%d", i)}); code != http.StatusOK {
				t.Fatalf("hit: %d", code)
			}
		}
		held := false
		apptest.Eventually(t, time.Minute, func() string {
			held = held || m.Metrics.PipelineLag() >= time.Second
			_, cnt, _ := c.Count("busy.example", "/p9")
			switch lb, ln, g := lag(c, "busy.example", busy), lag(c, "new.example", idle), m.Metrics.PipelineLag(); {
			case cnt.Views != 1 || cnt.Pending != 0:
				return fmt.Sprintf("/p9: %d views %d pending (held for the settle window)", cnt.Views, cnt.Pending)
			case lb != 0 || ln != 0 || g != 0 || gauge(c) != 0:
				return fmt.Sprintf("at rest: busy.example %v s behind, new.example %v s, the gauge %v (/metrics %v s); want 0", lb, ln, g, gauge(c))
			}
			return ""
		})
		if !held {
			t.Errorf("the gauge never showed the held views waiting")
		}
	})
	t.Run("one site waiting for the feed", func(t *testing.T) {
		m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.Validate.Rules.SettleWindow = -1; c.Validate.Feed.Every = time.Hour }, time.Now)
		c := apptest.NewClient(t, m)
		busy, idle := c.AddSite("busy.example"), c.AddSite("new.example")
		sent := time.Now()
		for i := range 3 {
			if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.FirefoxUA, Site: "busy.example", Page: "/a"}); code != http.StatusOK {
				t.Fatalf("hit: %d", code)
			}
		}
		apptest.Eventually(t, time.Minute, func() string {
			_, cnt, _ := c.Count("busy.example", "/a")
			lb, ln := lag(c, "busy.example", busy), lag(c, "new.example", idle)
			if cnt.Pending != 3 || lb < 2 || ln != 0 || m.Metrics.PipelineLag() < 2*time.Second || gauge(c) < 2 {
				return fmt.Sprintf("/a pending %d; busy.example %v s behind, new.example %v s, the gauge %v (/metrics %v s); want 3 pending, busy ≥ 2 s, new 0, the gauge ≥ 2 s",
					cnt.Pending, lb, ln, m.Metrics.PipelineLag(), gauge(c))
			}
			return ""
		})
		if lb := lag(c, "busy.example", busy); lb > time.Since(sent).Seconds()+1 {
			t.Errorf("busy.example %v s behind, %v after the views were sent", lb, time.Since(sent))
		}
	})
}

// lag is, through c, the stats API's realtime lag_seconds of site.
func lag(c *apptest.Client, site, token string) float64 {
	c.T.Helper()
	req, _ := http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/stats/realtime", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	code, body := c.Do(req)
	var out struct {
		Lag *float64 `json:"lag_seconds"`
	}
	if err := json.Unmarshal(body, &out); code != http.StatusOK || err != nil || out.Lag == nil {
		c.T.Fatalf("realtime of %s: %d %s (%v)", site, code, body, err)
	}
	return *out.Lag
}

// gauge is, through c, viewcount_pipeline_lag_seconds as /metrics serves it.
func gauge(c *apptest.Client) float64 {
	c.T.Helper()
	req, _ := http.NewRequest("GET", c.Base+"/metrics", nil)
	code, body := c.Do(req)
	if code != http.StatusOK {
		c.T.Fatalf("/metrics: %d", code)
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "viewcount_pipeline_lag_seconds "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				c.T.Fatalf("/metrics: %q", sc.Text())
			}
			return f
		}
	}
	c.T.Fatal("/metrics: no viewcount_pipeline_lag_seconds")
	return 0
}
