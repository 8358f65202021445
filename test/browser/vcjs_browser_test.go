//go:build !race

package browser

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount/test/apptest"
)

// vcjsChromium is the browser the vc.js tests drive. Without one they skip,
// except in CI (env CI set), which must run them: .ci/run installs Debian's
// chromium.
func vcjsChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium on PATH, and CI is set: the browser test must run in CI (apt-get install chromium)")
	}
	t.Skip("no chromium on PATH (apt-get install chromium); CI runs this test")
	return ""
}

// personChromium starts headless Chromium made to look like a person's
// browser, as the vc.js tests need their views to count: no automation
// flag (navigator.webdriver false), a user agent without "Headless", and,
// through setUA (run it before the first navigation of a tab), a desktop
// screen (headless Chromium's 800 × 600 is judged headless), and a
// person's window (personWindow). flags are more command-line
// switches, e.g. host-resolver-rules. The browser lives for 2 minutes at
// most.
func personChromium(t *testing.T, exe string, flags ...chromedp.ExecAllocatorOption) (context.Context, chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe),
		// What makes navigator.webdriver true in a browser under CDP.
		chromedp.Flag("enable-automation", false), chromedp.Flag("disable-blink-features", "AutomationControlled"))
	opts = append(opts, personWindow...)
	opts = append(opts, flags...)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelBrowser)
	ua, err := chromedp.Run(bctx, chromedp.Evaluate[string](`navigator.userAgent`))
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ua = strings.Replace(ua, "HeadlessChrome/", "Chrome/", 1)
	setUA := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: ua}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
			Width: 1280, Height: 720, DeviceScaleFactor: 1, ScreenWidth: 1920, ScreenHeight: 1080})
		return err
	})
	return bctx, setUA
}

// personWindow gives the page a person's window, the size setUA's
// viewport is. Chromium's features stay its defaults (RenderDocument on:
// a cross-site navigation's new document reads its window as 0 × 0 until
// its first frame, which vc.js waits for; TestTrackerWindowSize).
var personWindow = []chromedp.ExecAllocatorOption{chromedp.WindowSize(1280, 720)}

// requestLog is a reverse proxy in front of the viewcount process that
// records every request it passes on: the test's view of what the browser
// actually sent, and to where.
type requestLog struct {
	// Engagements passes the tracker's engagement events on to the
	// server. Without it they are recorded and answered, not passed on:
	// vc.js sends one for each view whose page is hidden or left, and each
	// would be a row of its own in views_raw, which the verdict counts of
	// the tests of views are not about (TestTrackerEngagement's are).
	Engagements bool

	mu      sync.Mutex
	seen    []string // "METHOD /path?query"
	headers []string // "METHOD /path Origin=… Referer=…", for the log
	bodies  []string // the bodies of POST /v1/events
}

func (l *requestLog) handler(target string) http.Handler {
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Method == http.MethodPost && r.URL.Path == "/v1/events" {
			body, _ = io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		l.mu.Lock()
		if body != nil {
			l.bodies = append(l.bodies, string(body))
		}
		l.seen = append(l.seen, r.Method+" "+r.URL.RequestURI())
		l.headers = append(l.headers, fmt.Sprintf("%s %s Origin=%q Referer=%q", r.Method, r.URL.Path, r.Header.Get("Origin"), r.Header.Get("Referer")))
		l.mu.Unlock()
		if !l.Engagements && bytes.Contains(body, []byte(`"type":"engagement"`)) {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		proxy.ServeHTTP(w, r)
	})
}

// beacons returns the bodies of the views of page sent by beacon (not
// their engagements, which name the page too).
func (l *requestLog) beacons(page string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, b := range l.bodies {
		if strings.Contains(b, `"page":"`+page+`"`) && !strings.Contains(b, `"type":"engagement"`) {
			out = append(out, b)
		}
	}
	return out
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

// matching returns the requests seen with the method and path prefix whose
// query's page is page ("" for any).
func (l *requestLog) matching(method, pathPrefix, page string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.seen {
		m, uri, _ := strings.Cut(s, " ")
		u, err := url.ParseRequestURI(uri)
		if m != method || err != nil || !strings.HasPrefix(u.Path, pathPrefix) {
			continue
		}
		if page == "" || slices.Contains(u.Query()["page"], page) {
			out = append(out, s)
		}
	}
	return out
}

// TestVCJSInBrowser drives Chromium against the whole process on embedded
// NATS and chDB, with the tracker loaded by pages of another origin (the
// site's own, www.example.com):
//
//   - a page whose CSP allows the viewcount origin in script-src and img-src
//     but not connect-src: Chromium blocks the beacon (sendBeacon still says
//     true), vc.js sees the violation and sends the pixel, and the view is
//     counted;
//   - a page with data-vc-count elements: one cross-origin batch request
//     (CORS) fills them with the counts, formatted by toLocaleString; its
//     Report-Only policy reports the beacon, which is sent anyway, so vc.js
//     sends no pixel.
//
// The browser is made to look like a person's (a Chrome UA without
// "Headless", navigator.webdriver false): this test is about delivery and
// display, so its views must count. How automation is judged (headless) is
// the dashboard's browser test.
func TestVCJSInBrowser(t *testing.T) {
	exe := vcjsChromium(t)
	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	c.AddSite("example.com")

	// 1,000 people's views of /csp (one network each), so the count shows
	// a thousands separator.
	const seeded = 1000
	for i := range seeded {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.ChromeUA, Site: "example.com", Page: "/csp"}); code != http.StatusOK {
			t.Fatalf("seed %d: %d", i, code)
		}
	}
	var reqs requestLog
	waitCount := func(page string, want uint64) {
		t.Helper()
		apptest.Eventually(t, 30*time.Second, func() string {
			if _, got, _ := c.Count("example.com", page); got.Views != want {
				// A view judged invalid never counts, however long this waits.
				return fmt.Sprintf("%s: %d views, want %d (site's verdicts in views_raw: %v; the page's beacons %q)",
					page, got.Views, want, apptest.Reasons(t, m, "example.com"), reqs.beacons(page))
			}
			return ""
		})
	}
	waitCount("/csp", seeded)

	vc := httptest.NewServer(reqs.handler("http://" + m.Addr()))
	t.Cleanup(vc.Close)
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tag := `<script defer src="` + vc.URL + `/vc.js" data-site="example.com"></script>`
		// Violations as the page sees them, for the test to read back.
		record := `<script nonce="t">window.violations=[];document.addEventListener('securitypolicyviolation',
			function(e){violations.push(e.effectiveDirective+' '+e.blockedURI)})</script>`
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/csp":
			// A strict policy that leaves the viewcount origin out of connect-src.
			w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-t' "+vc.URL+"; img-src "+vc.URL+"; connect-src 'self'")
			fmt.Fprint(w, `<!doctype html><title>csp</title>`+record+tag+`<p>strict CSP</p>`)
		case "/probe":
			w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-t'; connect-src 'self'")
			fmt.Fprint(w, `<!doctype html><title>probe</title>`+record)
		case "/count":
			// Report-Only: the beacon is reported but sent, so no pixel.
			w.Header().Set("Content-Security-Policy-Report-Only", "connect-src 'self'")
			fmt.Fprint(w, `<!doctype html><title>count</title>`+record+tag+`<p><span id="a" data-vc-count="/csp"></span>
				<span id="b" data-vc-count="/csp/" data-vc-label="reads"></span> <span id="c" data-vc-count="/never"></span></p>`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(pages.Close)
	// The pages are on the site's own host (Chromium resolves it to
	// loopback), as a real site's are: vc.js sends nothing from localhost
	// or 127.0.0.1, and a view from another host is foreign_origin.
	site := strings.Replace(pages.URL, "127.0.0.1", "www.example.com", 1)
	bctx, setUA := personChromium(t, exe, chromedp.Flag("host-resolver-rules", "MAP www.example.com 127.0.0.1"))

	// The CSP page: the beacon is blocked, the pixel carries the view.
	if err := chromedp.Do(bctx, setUA, chromedp.Navigate(site+"/csp")); err != nil {
		t.Fatal(err)
	}
	if webdriver, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`navigator.webdriver`)); err != nil || webdriver {
		t.Fatalf("navigator.webdriver %v (%v): the view would be judged headless", webdriver, err)
	}
	apptest.Eventually(t, 10*time.Second, func() string {
		if len(reqs.matching("GET", "/p.gif", "/csp")) != 1 {
			return fmt.Sprintf("no pixel for /csp among %q", reqs.all())
		}
		return ""
	})
	violations, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`violations`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("CSP violations the page saw: %q", violations)
	if !slices.Contains(violations, "connect-src "+vc.URL+"/v1/events") {
		t.Errorf("violations %q: want connect-src for the beacon", violations)
	}
	if b := reqs.matching("POST", "/v1/events", ""); len(b) != 0 {
		t.Errorf("beacons reached the server from the CSP page: %q", b)
	}
	waitCount("/csp", seeded+1)
	if r := apptest.Reasons(t, m, "example.com"); r["valid"] != seeded+1 || len(r) != 1 {
		t.Errorf("verdicts %v, want %d valid and nothing else", r, seeded+1)
	}

	// What sendBeacon answers when CSP blocks it (the reason vc.js listens
	// for violations): logged, not asserted, as Chromium may change it.
	if err := chromedp.Do(bctx, chromedp.Navigate(site+"/probe")); err != nil {
		t.Fatal(err)
	}
	sent, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`navigator.sendBeacon('`+vc.URL+`/v1/events', '{}')`))
	t.Logf("sendBeacon to a URL connect-src blocks returned %v (%v)", sent, err)

	// The count page: three elements, one batch request, the page's own
	// view by the beacon (connect-src is not restricted there).
	if err := chromedp.Do(bctx, chromedp.Navigate(site+"/count")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, untilJS(`document.getElementById('c').textContent !== ''`,
		chromedp.WithPollingTimeout(15*time.Second))); err != nil {
		t.Fatalf("count page: %v (requests %q)", err, reqs.all())
	}
	texts, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`['a','b','c'].map(id => document.getElementById(id).textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"1,001 views", "1,001 reads", "0 views"}; !slices.Equal(texts, want) {
		t.Errorf("data-vc-count elements show %q, want %q", texts, want)
	}
	if b := reqs.matching("GET", "/v1/sites/example.com/counts", ""); len(b) != 1 {
		t.Errorf("count requests %q, want one batch", b)
	}
	apptest.Eventually(t, 10*time.Second, func() string {
		if len(reqs.matching("POST", "/v1/events", "")) != 1 {
			return fmt.Sprintf("no beacon from the count page among %q", reqs.all())
		}
		return ""
	})
	waitCount("/count", 1)
	violations, err = chromedp.Run(bctx, chromedp.Evaluate[[]string](`violations`))
	if err != nil || !slices.Contains(violations, "connect-src "+vc.URL+"/v1/events") {
		t.Errorf("count page's report-only violations %q (%v): want the beacon's", violations, err)
	}
	// The view is counted by now, so a pixel sent with the report would
	// have arrived long before.
	if p := reqs.matching("GET", "/p.gif", "/count"); len(p) != 0 {
		t.Errorf("a Report-Only violation sent the pixel too: %q", p)
	}
}
