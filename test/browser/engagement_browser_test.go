//go:build !race

package browser

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestTrackerEngagement: what vc.js measures of a view and sends as its
// engagement event (docs/engagement.md), as Chromium runs it and as the
// events reach the VIEWS stream (the server runs on a NATS server of the
// test's, which the test reads back, as a cluster deployment's would be).
//
// Measured on Chromium 156, headless: a tab the test opens has the
// window's focus (document.hasFocus()) while it is the window's active
// tab; opening another tab blurs it, then hides it; activating it again
// focuses it, then shows it. The browser's first tab never has focus, so
// the test uses tabs of its own. Emulation.setFocusEmulationEnabled would
// give focus too, but it keeps the page visible whatever its tab does.
//
//   - a tall page, visible and focused for 12 s and scrolled halfway, then
//     left by an SPA navigation: the first view's engagement reports the
//     time between its view's send and the navigation, as the page's own
//     clock measured it, and a scroll depth of 50;
//   - the second view's page hidden (another tab opened in front): its
//     engagement is sent; shown again for 1.5 s and hidden again: a
//     second report with the added time; shown, left for another page
//     (a report on pagehide) for 2 s, back from the back-forward cache
//     for 1 s and hidden: a last report, without the time frozen in the
//     cache; closed while hidden: nothing, since nothing changed;
//   - a tab loaded in the background and closed without being shown: the
//     view is sent (vc.js sends a hidden page's view at once, without a
//     window), and its engagement reports no engaged time;
//   - a page prerendered by speculation rules and never activated: neither
//     its view nor an engagement is sent. Chromium refuses to prerender
//     for a page a DevTools session is attached to directly, as chromedp
//     attaches (PrerenderingDisabledByDevTools), so the page that holds
//     the rules is opened in a tab the test never attaches to.
//
// Every wait is on a condition; only the 12 s, 1.5 s and 1 s of engaged
// time and the 2 s in the cache are waited out, as they are what is
// measured.
func TestTrackerEngagement(t *testing.T) {
	exe := vcjsChromium(t)
	ns := streamtest.Server(t)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) {
		c.Validate.Rules.SettleWindow = -1 // one browser, several views a minute: not held
		c.Stream.URL = ns.ClientURL()
	}, time.Now)
	apptest.NewClient(t, m).AddSite("example.com")
	events := viewsStream(t, ns.ClientURL())

	reqs := requestLog{Engagements: true}
	vc := httptest.NewServer(reqs.handler("http://" + m.Addr()))
	t.Cleanup(vc.Close)
	var ran pageLog
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ran" {
			// The page's own report that it loaded, and whether prerendered.
			ran.add(r.URL.Query().Get("page") + " prerendering=" + r.URL.Query().Get("prerendering") + " purpose=" + r.Header.Get("Sec-Purpose"))
			w.WriteHeader(http.StatusNoContent)
			return
		}
		tag := `<script defer src="` + vc.URL + `/vc.js" data-site="example.com"></script>`
		body := `<p>` + r.URL.Path + `</p>`
		switch r.URL.Path {
		case "/article":
			body = `<div style="height: 5000px">a tall article</div>`
		case "/rules":
			body = `<script type="speculationrules">{"prerender": [{"source": "list", "urls": ["/prerendered"]}]}</script><p>rules</p>`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>`+r.URL.Path+`</title>`+pageRecorder+tag+body)
	}))
	t.Cleanup(pages.Close)
	// The site's own host (vc.js sends nothing from 127.0.0.1).
	site := strings.Replace(pages.URL, "127.0.0.1", "www.example.com", 1)
	bctx, setUA := personChromium(t, exe, chromedp.Flag("host-resolver-rules", "MAP www.example.com 127.0.0.1"))
	browser := chromedp.FromContext(bctx).Browser
	activate := func(ctx context.Context) {
		t.Helper()
		if _, err := cdp.Call(bctx, browser, target.ActivateTarget, target.ActivateTargetParams{TargetID: chromedp.FromContext(ctx).Target.TargetID}); err != nil {
			t.Fatal(err)
		}
	}

	// The article, visible and focused, in a tab of the window.
	tab, closeTab := chromedp.NewContext(bctx, chromedp.WithNewWindow(false))
	defer closeTab()
	if err := chromedp.Do(tab, setUA, chromedp.Navigate(site+"/article")); err != nil {
		t.Fatal(err)
	}
	until(t, tab, 10*time.Second, `sent.length == 1`)
	if s := pageEval[string](t, tab, `document.visibilityState + ' ' + document.hasFocus()`); s != "visible true" {
		t.Fatalf("the article's tab is %s, want visible and focused: the test's premise", s)
	}
	// Halfway: the window's bottom at half the document's height.
	if y := pageEval[float64](t, tab, `scrollTo(0, document.documentElement.scrollHeight / 2 - innerHeight); scrollY`); y <= 0 {
		t.Fatalf("scrolled to %v", y)
	}
	until(t, tab, 30*time.Second, `performance.now() - sent[0].t >= 12000`)
	navAt := pageEval[float64](t, tab, `var at = performance.now(); history.pushState(null, '', '/article/comments'); at`)
	until(t, tab, 10*time.Second, `sent.length == 3`)
	sent := pageSent(t, tab)
	view1, eng1, view2 := sent[0], sent[1], sent[2]
	if view1.ev.Type != "" || eng1.ev.Type != "engagement" || view2.ev.Type != "" || view2.ev.Page != "/article/comments" {
		t.Fatalf("sent %v, want the view, its engagement, the next view", sent)
	}
	// The time the page measured, from the view's send to the navigation.
	visible1 := navAt - view1.t
	checkEngagement(t, "the article's, at the SPA navigation", view1.ev, eng1.ev, visible1, 50)
	t.Logf("article: visible %.0f ms, engagement %s", visible1, eng1.body)

	// Hidden: another tab in front. The engagement goes at once.
	other, closeOther := chromedp.NewContext(bctx, chromedp.WithNewWindow(false))
	defer closeOther()
	if err := chromedp.Do(other); err != nil {
		t.Fatal(err)
	}
	visibleSince := fmt.Sprintf(`visibleSince(%f)`, view2.t)
	eng2 := waitSent(t, tab, 4, "when the page was hidden")
	checkEngagement(t, "the comments', hidden", view2.ev, eng2.ev, pageEval[float64](t, tab, visibleSince), 50)

	// Shown again for 1.5 s, then hidden again: a second report, with the
	// time added.
	shown := func() {
		t.Helper()
		activate(tab)
		until(t, tab, 10*time.Second, `document.visibilityState == 'visible' && document.hasFocus()`)
	}
	shown()
	until(t, tab, 10*time.Second, `performance.now() - seen[seen.length - 1].t >= 1500`)
	activate(other)
	eng3 := waitSent(t, tab, 5, "when the page was hidden again")
	checkEngagement(t, "the comments', hidden again", view2.ev, eng3.ev, pageEval[float64](t, tab, visibleSince), 50)

	// Through the back-forward cache: shown, left for another page for 2 s
	// (a report on pagehide), back, shown for 1 s and hidden: the 2 s
	// frozen in the cache are not engaged time.
	shown()
	if err := chromedp.Do(tab, chromedp.Navigate(site+"/elsewhere")); err != nil {
		t.Fatal(err)
	}
	until(t, tab, 10*time.Second, `sent.length == 1 && performance.now() - sent[0].t >= 2000`)
	pageEval[bool](t, tab, `history.back(), true`)
	until(t, tab, 10*time.Second, `location.pathname == '/article/comments'`)
	if n := pageEval[int](t, tab, `sent.length`); n != 6 {
		t.Fatalf("back on the comments: %d beacons recorded, want the 6 before (restored from the back-forward cache, not loaded again)", n)
	}
	until(t, tab, 10*time.Second, `document.hasFocus() && performance.now() - seen[seen.length - 1].t >= 1000`)
	activate(other)
	eng5 := waitSent(t, tab, 7, "when the page back from the cache was hidden")
	eng4 := pageSent(t, tab)[5]
	checkEngagement(t, "the comments', left for another page", view2.ev, eng4.ev,
		pageEval[float64](t, tab, fmt.Sprintf(`visibleSince(%f, seen.filter(function (s) { return s.state == 'pagehide'; })[0].t)`, view2.t)), 50)
	checkEngagement(t, "the comments', back from the cache and hidden", view2.ev, eng5.ev, pageEval[float64](t, tab, visibleSince), 50)
	t.Logf("comments: %s; %s; %s; %s; visibility %s", eng2.body, eng3.body, eng4.body, eng5.body, pageEval[string](t, tab, `JSON.stringify(seen)`))
	// Closed while hidden: nothing changed since the last report.
	closeTab()

	// A tab loaded in the background and closed unseen.
	bgTarget, err := cdp.Call(bctx, browser, target.CreateTarget, target.CreateTargetParams{URL: "about:blank", Background: new(true), NewWindow: new(false)})
	if err != nil {
		t.Fatal(err)
	}
	bg, closeBG := chromedp.NewContext(bctx, chromedp.WithTargetID(bgTarget.TargetID))
	defer closeBG()
	if err := chromedp.Do(bg, setUA, chromedp.Navigate(site+"/background")); err != nil {
		t.Fatal(err)
	}
	until(t, bg, 10*time.Second, `document.readyState == 'complete'`)
	bgState := pageEval[string](t, bg, `document.visibilityState + ' ' + document.hasFocus()`)
	bgSent := pageSent(t, bg)
	t.Logf("background tab: %s; sent %v", bgState, bgSent)
	if bgState != "hidden false" {
		t.Errorf("background tab %s, want hidden: the test's premise", bgState)
	}
	closeBG()

	// The rules' page, in a tab no DevTools session is attached to, so
	// that Chromium prerenders. It is closed, never activating the page.
	rules, err := cdp.Call(bctx, browser, target.CreateTarget, target.CreateTargetParams{URL: site + "/rules", NewWindow: new(false)})
	if err != nil {
		t.Fatal(err)
	}
	const prerendered = "/prerendered prerendering=true purpose=prefetch;prerender"
	deadline := time.Now().Add(15 * time.Second)
	for !slices.Contains(ran.all(), prerendered) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	prerenderRan := slices.Contains(ran.all(), prerendered)
	if !prerenderRan {
		// Not a failure of vc.js: the premise is not met, and reported.
		t.Errorf("Chromium did not prerender /prerendered within 15 s (pages loaded: %q)", ran.all())
	}
	if _, err := cdp.Call(bctx, browser, target.CloseTarget, target.CloseTargetParams(rules)); err != nil {
		t.Fatal(err)
	}

	// A last view, sent after everything above: once it is in the stream,
	// so is anything sent before it.
	if err := chromedp.Do(other, setUA, chromedp.Navigate(site+"/last")); err != nil {
		t.Fatal(err)
	}
	until(t, other, 10*time.Second, `sent.length == 1`)
	var all []viewcount.Event
	apptest.Eventually(t, 20*time.Second, func() string {
		all = events()
		if !slices.ContainsFunc(all, func(e viewcount.Event) bool { return e.Page == "/last" && e.Kind == viewcount.KindView }) {
			return fmt.Sprintf("the last view is not in the stream (%d events; beacons %q)", len(all), reqs.all())
		}
		return ""
	})
	byID := map[string][]viewcount.Event{}
	for _, e := range all {
		byID[e.ID] = append(byID[e.ID], e)
		t.Logf("stream: %s %s id=%s %+v visitor=%x ua=%q", e.Kind, e.Page, e.ID, e.Engagement, e.Visitor, e.UA)
	}
	// The stream has each view once, and its engagements as they were sent
	// (in any order: separate requests), with the view's visitor, unless
	// Chromium sent the report with another user agent: CDP's override
	// (setUA) does not reach a beacon sent on pagehide, which goes with
	// the browser's own, so only a test's browser does that.
	streamed := func(what string, view trackerEvent, want ...trackerEvent) {
		t.Helper()
		var views, engs []viewcount.Event
		for _, e := range byID[view.ID] {
			if e.Kind == viewcount.KindView {
				views = append(views, e)
			} else {
				engs = append(engs, e)
			}
		}
		if len(views) != 1 || views[0].Page != view.Page {
			t.Errorf("%s: the stream has views %v for its id, want one of %s", what, views, view.Page)
			return
		}
		for _, w := range want {
			i := slices.IndexFunc(engs, func(e viewcount.Event) bool {
				return e.Kind == viewcount.KindEngagement && e.Page == view.Page && e.Site == "example.com" &&
					e.Engagement == viewcount.Engagement{EngagedMS: uint32(*w.EngagedMS), Scroll: uint8(w.Scroll), AgeMS: uint32(w.AgeMS)}
			})
			if i < 0 {
				t.Errorf("%s: the stream lacks the engagement sent, %s (it has %v)", what, w, engs)
				continue
			}
			switch e := engs[i]; {
			case e.UA == views[0].UA && e.Visitor != views[0].Visitor:
				t.Errorf("%s: engagement %+v has visitor %x, its view %x", what, e.Engagement, e.Visitor, views[0].Visitor)
			case e.UA != views[0].UA:
				t.Logf("%s: engagement %+v sent with user agent %q", what, e.Engagement, e.UA)
			}
			engs = slices.Delete(engs, i, i+1)
		}
		if len(engs) != 0 {
			t.Errorf("%s: the stream has engagements never sent: %v", what, engs)
		}
	}
	streamed("article", view1.ev, eng1.ev)
	streamed("comments", view2.ev, eng2.ev, eng3.ev, eng4.ev, eng5.ev)

	// The background tab: its view if it sent one, and any engagement
	// with no engaged time.
	var bgViews, bgEngagements int
	for _, e := range all {
		if e.Page != "/background" {
			continue
		}
		switch e.Kind {
		case viewcount.KindView:
			bgViews++
		case viewcount.KindEngagement:
			bgEngagements++
			if e.Engagement.EngagedMS != 0 {
				t.Errorf("background tab, never shown: engagement %+v, want 0 ms engaged", e.Engagement)
			}
		}
	}
	t.Logf("background tab: %d views, %d engagements in the stream", bgViews, bgEngagements)
	if sentViews := len(slices.DeleteFunc(bgSent, func(b sentBeacon) bool { return b.ev.Type != "" })); bgViews != sentViews {
		t.Errorf("background tab: %d views in the stream, the page sent %d", bgViews, sentViews)
	}

	// The prerendered page: nothing at all.
	for _, e := range all {
		if e.Page == "/prerendered" {
			t.Errorf("prerendered page never activated: the stream has its %s %+v", e.Kind, e)
		}
	}
	if b := reqs.beacons("/prerendered"); len(b) != 0 {
		t.Errorf("prerendered page never activated sent %q", b)
	}
	t.Logf("prerendered: ran %v; pages' load reports %q", prerenderRan, ran.all())

	// As the validator judged and stored them (docs/engagement.md): the
	// article and its comments are two views of one visit, entered on the
	// article and left from the comments; the article's report is accepted
	// and makes it an engaged view (12 s, at least the default 10 s); the
	// background tab's report, if it sent one, is accepted at 0 s, so its
	// view is not engaged.
	type row struct {
		kind        uint8
		verdict     string
		engaged     uint32
		visits      int8
		entry, prev string
		engagedTo   int8
	}
	var rows map[string][]row
	apptest.Eventually(t, 30*time.Second, func() string {
		res, err := m.Store.Query(context.Background(), `SELECT event_id, kind, toString(verdict) AS verdict, engaged_ms, d_visits, entry_page, prev_page, eng_to
			FROM views_raw WHERE site = 'example.com' ORDER BY seq, idx`, nil)
		if err != nil {
			return err.Error()
		}
		rows = map[string][]row{}
		last := false
		for res.Next() {
			id := res.String("event_id")
			rows[id] = append(rows[id], row{res.Uint8("kind"), res.String("verdict"), res.Uint32("engaged_ms"), int8(res.Int64("d_visits")),
				res.String("entry_page"), res.String("prev_page"), int8(res.Int64("eng_to"))})
			last = last || res.String("event_id") == sent[len(sent)-1].ev.ID
		}
		if len(rows[view2.ev.ID]) < 2 {
			return fmt.Sprintf("the comments' view and reports are not stored yet (%d rows of its id)", len(rows[view2.ev.ID]))
		}
		return ""
	})
	first := func(id string, kind uint8) (row, bool) {
		for _, r := range rows[id] {
			if r.kind == kind {
				return r, true
			}
		}
		return row{}, false
	}
	if v, ok := first(view1.ev.ID, 0); !ok || v.verdict != "valid" || v.visits != 1 || v.entry != "/article" {
		t.Errorf("the article's view: %+v, want a valid view opening a visit on /article", v)
	}
	if v, ok := first(view2.ev.ID, 0); !ok || v.verdict != "valid" || v.visits != 0 || v.entry != "/article" || v.prev != "/article" {
		t.Errorf("the comments' view: %+v, want the same visit, its exit moved from /article", v)
	}
	if e, ok := first(view1.ev.ID, 1); !ok || e.verdict != "valid" || e.engaged != uint32(*eng1.ev.EngagedMS) ||
		e.engagedTo < viewcount.EngagedBucket(uint32(viewcount.DefaultEngagedAfter.Milliseconds())) {
		t.Errorf("the article's report: %+v, want accepted with %d ms, an engaged view", e, *eng1.ev.EngagedMS)
	}
	for _, b := range bgSent {
		if b.ev.Type != "" {
			continue
		}
		// Sent on close (pagehide), so with the browser's own user agent
		// when CDP overrides the tab's (see streamed): another visitor's
		// report, an orphan. Either way no engaged view.
		sameUA := true
		for _, e := range byID[b.ev.ID] {
			sameUA = sameUA && e.UA == byID[b.ev.ID][0].UA
		}
		e, ok := first(b.ev.ID, 1)
		switch {
		case !ok:
		case sameUA && (e.verdict != "valid" || e.engaged != 0 || e.engagedTo != 0):
			t.Errorf("the background tab's report: %+v, want accepted at 0 s (not an engaged view)", e)
		case !sameUA && e.verdict != "engagement_orphan":
			t.Errorf("the background tab's report, under another user agent: %+v, want an orphan", e)
		}
	}
}

// checkEngagement checks an engagement event vc.js sent against its view
// and what the page measured: engaged time within a second of visible (the
// page's own clock, so machine speed does not matter), scroll depth within
// 5 of scroll, the view's page, referrer and host.
func checkEngagement(t *testing.T, what string, view, e trackerEvent, visible float64, scroll int) {
	t.Helper()
	switch {
	case e.Type != "engagement" || e.Site != view.Site || e.ID != view.ID || e.Page != view.Page || e.Referrer != view.Referrer || e.Host != view.Host:
		t.Errorf("%s: engagement %s does not name its view %s", what, e, view)
	case e.EngagedMS == nil || math.Abs(float64(*e.EngagedMS)-visible) > 1000:
		t.Errorf("%s: engaged_ms %v, want %.0f ± 1000 (the page's measure)", what, e.EngagedMS, visible)
	case e.Scroll < scroll-5 || e.Scroll > scroll+5:
		t.Errorf("%s: scroll %d, want %d ± 5", what, e.Scroll, scroll)
	case e.AgeMS < *e.EngagedMS:
		t.Errorf("%s: age_ms %d under engaged_ms %d", what, e.AgeMS, *e.EngagedMS)
	}
}
