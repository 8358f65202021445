//go:build !race

package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestViewsFromWhereTheyBelong loads pages carrying example.com's tag (vc.js
// and a pixel <img>) in Chromium from several origins, all served on
// loopback: Chromium resolves www.example.com and fraud.test to 127.0.0.1
// (--host-resolver-rules), so the pages are on the hosts their names say.
//
//   - www.example.com: the site's own page; its beacon and pixel count.
//   - fraud.test: another site stuffing example.com's tag into its page;
//     both views are foreign_origin (the beacon's Origin, the pixel's
//     Referer say so).
//   - localhost and 127.0.0.1 (a developer's copy of the site): vc.js sends
//     nothing; the bare pixel <img>, which no script guards, is
//     foreign_origin.
//   - file: the same: vc.js sends nothing.
//   - www.example.com with localStorage.vc_ignore = "true" (the owner
//     excluding their own visits): vc.js sends nothing.
//   - Referrer-Policy: no-referrer on the site's own page: no Referer, so
//     the pixel has no evidence of its page and counts (a real visitor,
//     not a foreign one); the beacon still says where it came from.
//   - the same policy on fraud.test: the pixel counts too (no evidence;
//     the documented price of not losing real visitors, docs/origins.md);
//     the beacon is foreign_origin.
func TestViewsFromWhereTheyBelong(t *testing.T) {
	exe := vcjsChromium(t)
	// One browser sends all the views, as one visitor: more than five a
	// minute would make it watched and its views held for settling.
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.Validate.Rules.SettleWindow = -1 }, time.Now)
	c := apptest.NewClient(t, m)
	token := c.AddSite("example.com")

	var reqs requestLog
	vc := httptest.NewServer(reqs.handler("http://" + m.Addr()))
	t.Cleanup(vc.Close)
	tag := func(page string) string {
		return `<script defer src="` + vc.URL + `/vc.js" data-site="example.com"></script>` +
			`<img alt="" src="` + vc.URL + `/p.gif?site=example.com&page=/img` + page + `">`
	}
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		switch r.URL.Path {
		case "/private", "/hidden":
			w.Header().Set("Referrer-Policy", "no-referrer")
		case "/optout":
			fmt.Fprint(w, `<!doctype html><title>optout</title><script>localStorage.vc_ignore = "true"</script>`+
				`<script defer src="`+vc.URL+`/vc.js" data-site="example.com"></script><p>mine</p>`)
			return
		case "/favicon.ico":
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<!doctype html><title>%s</title>%s<p>%s</p>`, r.URL.Path, tag(r.URL.Path), r.Host)
	}))
	t.Cleanup(pages.Close)
	port := pages.URL[strings.LastIndexByte(pages.URL, ':'):]
	file := filepath.Join(t.TempDir(), "filepage.html")
	if err := os.WriteFile(file, []byte(`<!doctype html><title>file</title><script defer src="`+vc.URL+`/vc.js" data-site="example.com"></script>`), 0o644); err != nil {
		t.Fatal(err)
	}

	bctx, setUA := personChromium(t, exe,
		chromedp.Flag("host-resolver-rules", "MAP www.example.com 127.0.0.1, MAP fraud.test 127.0.0.1"))
	if err := chromedp.Do(bctx, setUA); err != nil {
		t.Fatal(err)
	}
	load := func(u string) {
		t.Helper()
		if err := chromedp.Do(bctx, chromedp.Navigate(u), untilJS(`document.readyState === 'complete'`)); err != nil {
			t.Fatalf("load %s: %v", u, err)
		}
		// A page that did not load is Chromium's error page, whose URL is
		// not the one asked for.
		if got := evalJS[string](t, &browser{ctx: bctx}, `location.href`); got != u {
			t.Fatalf("load %s: at %s", u, got)
		}
	}
	// The pages that send nothing first, so that by the time the views of
	// the others are stored, anything they sent would be too.
	load("http://localhost" + port + "/dev")
	load("http://127.0.0.1" + port + "/ip")
	load("file://" + file)
	load("http://www.example.com" + port + "/optout")
	if err := chromedp.Do(bctx, chromedp.Evaluate[chromedp.Void](`localStorage.removeItem('vc_ignore')`)); err != nil {
		t.Fatal(err)
	}
	load("http://www.example.com" + port + "/home")
	load("http://fraud.test" + port + "/stuffed")
	load("http://www.example.com" + port + "/private")
	load("http://fraud.test" + port + "/hidden")

	want := map[string]string{
		"/home": "valid", "/img/home": "valid",
		"/stuffed": "foreign_origin", "/img/stuffed": "foreign_origin",
		"/img/dev": "foreign_origin", "/img/ip": "foreign_origin",
		"/private": "valid", "/img/private": "valid",
		"/hidden": "foreign_origin", "/img/hidden": "valid",
	}
	var got map[string][]string
	t.Cleanup(func() {
		if t.Failed() || testing.Verbose() {
			reqs.mu.Lock()
			t.Logf("requests as viewcount saw them:\n%s", strings.Join(reqs.headers, "\n"))
			reqs.mu.Unlock()
		}
	})
	apptest.Eventually(t, 40*time.Second, func() string {
		res, err := m.Store.Query(context.Background(), queries.Text("raw_signals"), store.Params{"site": "example.com"})
		if err != nil {
			return err.Error()
		}
		got = map[string][]string{}
		for _, r := range res.TextRows() { // page, browser, req_flags, asn, verdict
			got[r[0]] = append(got[r[0]], r[4])
		}
		for page := range want {
			if len(got[page]) == 0 {
				return fmt.Sprintf("no view of %s yet; have %v", page, got)
			}
		}
		return ""
	})
	for _, page := range slices.Sorted(maps.Keys(got)) {
		if w, ok := want[page]; !ok {
			t.Errorf("%s: %v recorded; vc.js should have sent nothing from that page", page, got[page])
		} else if !slices.Equal(got[page], []string{w}) {
			t.Errorf("%s: %v, want [%s]", page, got[page], w)
		}
	}
	apptest.
		// Kept with their reason, in the invalid-traffic report, by the host
		// of the page they came from.
		// The report reads the rollups, which the feed fills a moment after
		// the verdicts are stored.
		Eventually(t, time.Minute, func() string {
			req, _ := http.NewRequest("GET", c.Base+"/v1/sites/example.com/invalid", nil)
			req.Header.Set("Authorization", "Bearer "+token)
			code, body := c.Do(req)
			var rep struct {
				ByReason map[string]int `json:"by_reason"`
				Hosts    []struct {
					Host   string
					Events int
				} `json:"foreign_origin_by_host"`
			}
			if err := json.Unmarshal(body, &rep); code != http.StatusOK || err != nil {
				t.Fatalf("invalid report: %d %s %v", code, body, err)
			}
			if rep.ByReason["foreign_origin"] != 5 || fmt.Sprint(rep.Hosts) != "[{fraud.test 3} {127.0.0.1 1} {localhost 1}]" {
				return "invalid report: " + string(body)
			}
			return ""
		})
	for _, page := range []string{"/dev", "/ip", "/optout", file} {
		if b := reqs.beacons(page); len(b) != 0 {
			t.Errorf("vc.js sent %s's view: %q", page, b)
		}
		if p := reqs.matching("GET", "/p.gif", page); len(p) != 0 {
			t.Errorf("vc.js sent %s's view as a pixel: %q", page, p)
		}
	}
}
