//go:build !race

package browser

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestOwnViewShownAtOnce: a page with a data-vc-count element shows its
// count with the view just sent, before the lagged count has it (as a
// site shows a reader's own like at once), and never counts it twice.
// Chromium loads the page: 1,001 for the 1,000 views before its own. It
// loads it again at once (the first view most likely not counted yet) and
// once the public count says 1,001: 1,001 both times, since the reloads
// are the same visitor's duplicates and the first view is shown once,
// whether the count has it yet or not. Another page's element shows that
// page's count alone. Every wait is on a condition, none on a timer.
func TestOwnViewShownAtOnce(t *testing.T) {
	exe := vcjsChromium(t)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) {
		c.Validate.Rules.SettleWindow = -1 // one browser, several views a minute: not held
	}, time.Now)
	c := apptest.NewClient(t, m)
	c.AddSite("example.com")
	const seeded = 1000
	for i := range seeded {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.ChromeUA, Site: "example.com", Page: "/post"}); code != http.StatusOK {
			t.Fatalf("seed %d: %d", i, code)
		}
	}
	for i := range 7 {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(seeded + i), UA: apptest.ChromeUA, Site: "example.com", Page: "/other"}); code != http.StatusOK {
			t.Fatalf("seed other %d: %d", i, code)
		}
	}
	waitCount := func(page string, want uint64) {
		t.Helper()
		apptest.Eventually(t, 30*time.Second, func() string {
			if _, got, _ := c.Count("example.com", page); got.Views != want {
				return fmt.Sprintf("%s: %d views, want %d", page, got.Views, want)
			}
			return ""
		})
	}
	waitCount("/post", seeded)
	waitCount("/other", 7)

	var reqs requestLog
	vc := httptest.NewServer(reqs.handler("http://" + m.Addr()))
	t.Cleanup(vc.Close)
	pageSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/post" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, `<!doctype html><title>post</title><script defer src="`+vc.URL+`/vc.js" data-site="example.com"></script>`+
			`<p><span id="n" data-vc-count></span> <span id="o" data-vc-count="/other"></span></p>`)
	}))
	t.Cleanup(pageSrv.Close)
	site := strings.Replace(pageSrv.URL, "127.0.0.1", "www.example.com", 1)
	bctx, setUA := personChromium(t, exe, chromedp.Flag("host-resolver-rules", "MAP www.example.com 127.0.0.1"))
	if err := chromedp.Do(bctx, setUA); err != nil {
		t.Fatal(err)
	}
	// shown loads the page and returns what its two elements show once
	// both are filled, and what vc.js remembers of the reader's own views.
	shown := func(what string) ([2]string, string) {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Navigate(site+"/post"),
			untilJS(`document.getElementById('n').textContent !== '' && document.getElementById('o').textContent !== ''`,
				chromedp.WithPollingTimeout(15*time.Second))); err != nil {
			t.Fatalf("%s: %v (requests %q)", what, err, reqs.all())
		}
		got, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`['n','o'].map(id => document.getElementById(id).textContent).concat([localStorage.vc_own || ''])`))
		if err != nil || len(got) != 3 {
			t.Fatalf("%s: %q %v", what, got, err)
		}
		t.Logf("%s: %q", what, got)
		return [2]string{got[0], got[1]}, got[2]
	}
	want := [2]string{"1,001 views", "7 views"}

	got, memory := shown("first load")
	if got != want {
		t.Errorf("first load shows %q, want %q: the view just sent, at once", got, want)
	}
	// The first view of the day is remembered with its stream position;
	// the view went by fetch (whose answer has it) and the counts by a
	// POST naming it, one request for both elements.
	var mem struct {
		D string            `json:"d"`
		P map[string]string `json:"p"`
	}
	if err := json.Unmarshal([]byte(memory), &mem); err != nil || mem.D != time.Now().UTC().Format(time.DateOnly) ||
		len(mem.P) != 1 || !regexp.MustCompile(`^[0-9]+:[0-9]+$`).MatchString(mem.P["/post"]) {
		t.Errorf("vc_own %q (%v): want today's date and the position of the view of /post", memory, err)
	}
	if n, g := len(reqs.matching("POST", "/v1/sites/example.com/counts", "")), len(reqs.matching("GET", "/v1/sites/example.com/counts", "")); n != 1 || g != 0 {
		t.Errorf("%d count POSTs and %d GETs, want one POST: %q", n, g, reqs.all())
	}
	if b := reqs.beacons("/post"); len(b) != 1 {
		t.Errorf("beacons of /post %q, want 1", b)
	}

	// At once: the lagged count may or may not have the first view; the
	// page shows it once either way.
	if got, again := shown("reload at once"); got != want || again != memory {
		t.Errorf("reload at once shows %q (vc_own %q), want %q (and %q): the first view, once", got, again, want, memory)
	}
	waitCount("/post", seeded+1) // the lagged count has the first view now
	if got, again := shown("reload after the count has the view"); got != want || again != memory {
		t.Errorf("reload shows %q (vc_own %q), want %q (and %q): the view counted once", got, again, want, memory)
	}
	if b := reqs.beacons("/post"); len(b) != 3 {
		t.Errorf("beacons of /post %q, want one per load", b)
	}
	apptest.
		// The reloads were the same visitor's duplicates: the count stays.
		Eventually(t, 30*time.Second, func() string {
			if r := apptest.Reasons(t, m, "example.com"); r["valid"] != seeded+7+1 || r["duplicate"] != 2 || len(r) != 2 {
				return fmt.Sprintf("verdicts %v, want %d valid and 2 duplicate", r, seeded+8)
			}
			return ""
		})
	waitCount("/post", seeded+1)
}
