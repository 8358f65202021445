package e2e

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
)

var botUAs = []string{
	"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
	"curl/8.5.0",
	"python-requests/2.32.3",
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/142.0.0.0 Safari/537.36",
}

// TestEndToEnd sends a labelled mix through HTTP into the real embedded
// stack and reads back exact counts and per-reason rejections.
func TestEndToEnd(t *testing.T) {
	// A 1 s public lag: the test reads its Cache-Control max-age.
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.API.PublicLag = time.Second }, time.Now)
	c := apptest.NewClient(t, m)
	c.AddSite("example.com")

	want := map[viewcount.Reason]int{}
	var validA, validB int
	uniquesA := map[string]bool{}
	send := func(h apptest.Hit, r viewcount.Reason) {
		t.Helper()
		if code := c.Send(h); code != http.StatusOK && code != http.StatusAccepted {
			t.Fatalf("send %+v: status %d", h, code)
		}
		want[r]++
	}
	uas := []string{apptest.ChromeUA, apptest.FirefoxUA, apptest.SafariUA}
	const humans = 400
	for i := 0; i < humans; i++ {
		ip, ua := apptest.VisitorIP(i), uas[i%3]
		id := fmt.Sprintf("ev-%d-a", i)
		send(apptest.Hit{IP: ip, UA: ua, Site: "example.com", Page: "/a", ID: id}, viewcount.Valid)
		validA++
		uniquesA[ip] = true
		if i%4 == 0 { // the beacon, with a trailing slash that folds into /b
			send(apptest.Hit{IP: ip, UA: ua, Site: "example.com", Page: "/b/", Beacon: true}, viewcount.Valid)
			validB++
		}
		if i%10 == 0 { // a client retry of the same event
			send(apptest.Hit{IP: ip, UA: ua, Site: "example.com", Page: "/a", ID: id}, viewcount.DuplicateID)
		}
		if i%8 == 0 { // a reload within the window
			send(apptest.Hit{IP: ip, UA: ua, Site: "example.com", Page: "/a?utm=x"}, viewcount.Duplicate)
		}
	}
	for i := 0; i < 60; i++ {
		send(apptest.Hit{IP: apptest.VisitorIP(1000 + i), UA: botUAs[i%len(botUAs)], Site: "example.com", Page: "/a"}, viewcount.BotUA)
	}
	for i := 0; i < 25; i++ {
		send(apptest.Hit{IP: apptest.VisitorIP(2000 + i), UA: apptest.ChromeUA, Site: "example.com", Page: "/a", Beacon: true, Webdriver: true}, viewcount.Headless)
	}
	for i := 0; i < 12; i++ {
		send(apptest.Hit{IP: apptest.VisitorIP(3000 + i), UA: "", Site: "example.com", Page: "/a"}, viewcount.EmptyUA)
	}
	for i := 0; i < 15; i++ {
		send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.ChromeUA, Site: "unknown.example", Page: "/a"}, viewcount.UnknownSite)
	}
	apptest.Eventually(t, 60*time.Second, func() string {
		code, got, _ := c.Count("example.com", "/a")
		if code != 200 || got.Views != uint64(validA) {
			return fmt.Sprintf("count /a: status %d views %d, want %d", code, got.Views, validA)
		}
		return ""
	})
	_, a, hdr := c.Count("example.com", "/a")
	if diff := math.Abs(float64(a.Uniques)-float64(len(uniquesA))) / float64(len(uniquesA)); diff > 0.02 {
		t.Errorf("uniques /a = %d, want %d within 2%%", a.Uniques, len(uniquesA))
	}
	if hdr.Get("Cache-Control") != "public, max-age=1" {
		t.Errorf("Cache-Control = %q", hdr.Get("Cache-Control"))
	}
	if ts, err := time.Parse(time.RFC3339, a.AsOf); err != nil || time.Since(ts) > time.Minute {
		t.Errorf("as_of = %q (%v)", a.AsOf, err)
	}
	apptest.Eventually(t, 30*time.Second, func() string {
		if _, b, _ := c.Count("example.com", "/b"); b.Views != uint64(validB) {
			return fmt.Sprintf("count /b = %d, want %d", b.Views, validB)
		}
		return ""
	})
	apptest.

		// Every event is in views_raw with its verdict, rejected ones included.
		Eventually(t, 30*time.Second, func() string {
			got := apptest.Reasons(t, m, "example.com")
			for _, r := range viewcount.Reasons {
				if r == viewcount.UnknownSite {
					continue
				}
				if got[string(r)] != uint64(want[r]) {
					return fmt.Sprintf("views_raw by verdict = %v, want %v", got, want)
				}
			}
			if u := apptest.Reasons(t, m, "unknown.example"); u[string(viewcount.UnknownSite)] != uint64(want[viewcount.UnknownSite]) {
				return fmt.Sprintf("unknown site rows = %v, want %d", u, want[viewcount.UnknownSite])
			}
			return ""
		})

	// Hits of an unknown site are kept (unknown_site) but never counted; its
	// count reads as zeros, not a 404 that would tell which sites exist.
	if code, z, _ := c.Count("unknown.example", "/a"); code != 200 || z.Views != 0 || z.Uniques != 0 {
		t.Errorf("count for unknown site: %d %+v, want zeros", code, z)
	}
	if code, z, _ := c.Count("example.com", "/never"); code != 200 || z.Views != 0 || z.Uniques != 0 {
		t.Errorf("count for unseen page: %d %+v, want zeros", code, z)
	}
	if m.Metrics.Published.Load() == 0 || m.Metrics.Inserted.Load() == 0 {
		t.Errorf("metrics not counting: published %d inserted %d", m.Metrics.Published.Load(), m.Metrics.Inserted.Load())
	}
	apptest.
		// The validators report how full their windows are.
		Eventually(t, 10*time.Second, func() string {
			var b strings.Builder
			_, _ = m.Metrics.WriteTo(&b)
			text := b.String()
			for _, want := range []string{"viewcount_validator_partitions " + strconv.Itoa(m.Config.Stream.Partitions) + "\n"} {
				if !strings.Contains(text, want) {
					return "metrics lack " + strings.TrimSpace(want)
				}
			}
			if strings.Contains(text, `viewcount_validator_window_keys{window="views"} 0`+"\n") {
				return "no view keys reported"
			}
			return ""
		})
	// It ends with a reconcile: every rollup equals its recount from views_raw.
	if rep, err := apptest.Reconcile(t, m, time.Unix(0, 0), time.Now().Add(time.Hour)); err != nil || !rep.OK() {
		t.Errorf("reconcile: %v %+v", err, rep)
	}
}

// TestRestartKeepsCounts stops the whole process mid-stream and starts it
// again on the same files: nothing acknowledged is lost, nothing is counted
// twice, and duplicate state survives (it is rebuilt from the stream).
func TestRestartKeepsCounts(t *testing.T) {
	data, db := t.TempDir(), apptest.NewDB()
	m := apptest.Start(t, data, db)
	c := apptest.NewClient(t, m)
	c.AddSite("restart.example")
	for i := 0; i < 200; i++ {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.ChromeUA, Site: "restart.example", Page: "/p", ID: fmt.Sprintf("r-%d", i)}); code != 200 {
			t.Fatalf("status %d", code)
		}
	}
	m.Close() // whatever was not inserted yet is redelivered after the restart

	m2 := apptest.Start(t, data, db)
	c2 := apptest.NewClient(t, m2)
	// Retries of events sent before the restart must still be duplicates.
	for i := 0; i < 200; i += 4 {
		if code := c2.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.ChromeUA, Site: "restart.example", Page: "/p", ID: fmt.Sprintf("r-%d", i)}); code != 200 {
			t.Fatalf("status %d", code)
		}
	}
	apptest.Eventually(t, 60*time.Second, func() string {
		got := apptest.Reasons(t, m2, "restart.example")
		if got["valid"] != 200 || got["duplicate_id"] != 50 {
			return fmt.Sprintf("views_raw by verdict = %v, want 200 valid, 50 duplicate_id", got)
		}
		if _, n, _ := c2.Count("restart.example", "/p"); n.Views != 200 {
			return fmt.Sprintf("public count = %d, want 200", n.Views)
		}
		return ""
	})
}
