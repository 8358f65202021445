package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestReaddedSiteStartsEmpty: a view in flight while its site is deleted
// must not count for whoever registers the domain next. Found by an
// attacker's probe: a view sent less than a second before
// DELETE /v1/admin/sites/{site}?confirm= was judged valid at once, waited
// in its partition's batch (--flush-every), and was inserted after the
// deletion had removed the site's rows; the re-added site showed it.
//
// The whole server on embedded NATS and chDB, with a long --flush-every so
// the judged view is still waiting for its insert while the site is
// deleted and added again. The re-added site must show no view, and the
// old view must be kept, rejected with a reason (unknown_site), never
// dropped.
func TestReaddedSiteStartsEmpty(t *testing.T) {
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) {
		c.Validate.FlushEvery = 6 * time.Second
		c.Validate.Feed.Every = 100 * time.Millisecond
	}, time.Now)
	c := apptest.NewClient(t, m)
	const site, page = "readd.example", "/in-flight"
	c.AddSite(site)
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0"
	if code := c.Send(apptest.Hit{IP: "203.0.113.7", UA: firefox, Site: site, Page: page, ID: "in-flight-1"}); code != 200 {
		t.Fatalf("hit: %d", code)
	}
	apptest.
		// Judged valid (the site is registered), and waiting for its insert.
		Eventually(t, 10*time.Second, func() string {
			if validatedValid(t, c) < 1 {
				return "the view not judged yet"
			}
			return ""
		})
	if got := apptest.Reasons(t, m, site); len(got) != 0 {
		t.Fatalf("the view was inserted before the deletion (%v): --flush-every did not hold it", got)
	}

	admin := func(method, path, body string, want int) {
		t.Helper()
		req, _ := http.NewRequest(method, c.Base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
		req.Header.Set("Content-Type", "application/json")
		if code, b := c.Do(req); code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, code, b, want)
		}
	}
	admin("DELETE", "/v1/admin/sites/"+site+"?confirm="+site, "", http.StatusOK)
	token := c.AddSite(site)
	apptest. // someone else's, perhaps
			Eventually( // The old view reaches views_raw, rejected, and is fed; the new
			// registration counts nothing.
			t, 30*time.Second, func() string {
				got := apptest.Reasons(t, m, site)
				if got[string(viewcount.Valid)] > 0 {
					t.Fatalf("the view in flight during the deletion is stored as valid for the re-added site: %s", fmtReasons(got))
				}
				if got[string(viewcount.UnknownSite)] != 1 || len(got) != 1 {
					return "the in-flight view not stored as unknown_site yet: " + fmtReasons(got)
				}
				if m.Metrics.Fed.Load() < 1 {
					return "not fed yet"
				}
				return ""
			})
	res, err := m.Store.Query(context.Background(), queries.Text(queries.PageCount), store.Params{"site": site, "page": page})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.TextRows()) > 0 && res.TextRows()[0][0] != "0" && res.TextRows()[0][0] != "" {
		t.Errorf("the rollups count %v for the re-added site's %s, want nothing", res.TextRows(), page)
	}
	req, _ := http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/stats/summary", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	code, body := c.Do(req)
	var sum struct{ Views, Uniques uint64 }
	if err := json.Unmarshal(body, &sum); code != 200 || err != nil || sum.Views != 0 || sum.Uniques != 0 {
		t.Errorf("the re-added site's summary: %d %s, want no views", code, body)
	}
	req, _ = http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/count?page="+page, nil)
	code, body = c.Do(req)
	if code != 200 || !strings.Contains(string(body), `"views":0,`) {
		t.Errorf("the re-added site's public count: %d %s, want 0 views", code, body)
	}
}

func fmtReasons(r map[string]uint64) string {
	b, _ := json.Marshal(r)
	return string(b)
}

// validatedValid reads viewcount_events_validated_total{verdict="valid"}
// from /metrics.
func validatedValid(t *testing.T, c *apptest.Client) int {
	t.Helper()
	req, _ := http.NewRequest("GET", c.Base+"/metrics", nil)
	_, body := c.Do(req)
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(`viewcount_events_validated_total{verdict="valid"} `)); ok {
			var n int
			_ = json.Unmarshal(v, &n)
			return n
		}
	}
	return 0
}
