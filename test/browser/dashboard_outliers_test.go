//go:build !race

package browser

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestDashboardEngagementOutliers: the filtered panel says which counted
// traffic nobody looked at. A farm's network (AS 12345, 400 views from a
// referral ring, one engaged) against the site's readers (300 views, 180
// engaged): the panel lists "AS 12345: 400 views, 0.3 % engaged (site:
// 26 %)" with the correction that would exclude it, the ring's referrer
// alike, and the readers' network not at all. A referrer holding markup
// is shown as its text.
func TestDashboardEngagementOutliers(t *testing.T) {
	b := newBrowser(t, 1400, 1000)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) {
		c.Validate.Rules.SettleWindow = -1
	}, time.Now)
	c := apptest.NewClient(t, m)
	const site = "outliers.example"
	token := c.AddSite(site)

	// Stored verdicts of today (the store's real insert path; partition
	// 4000 is none the stream has), each engaged view with its report.
	now := time.Now().UTC()
	start := now.Add(-5 * time.Minute)
	if start.Day() != now.Day() {
		start = now.Truncate(24 * time.Hour)
	}
	const markupRef = `<img src=x onerror="window.__xss=1">.example`
	var rows []viewcount.Verdict
	add := func(asn uint32, ref, browser string, n, engaged int) {
		for i := range n {
			tm := start.Add(time.Duration(len(rows)) * 100 * time.Millisecond)
			v := viewcount.Verdict{Event: viewcount.Event{Time: tm, Site: site, Page: "/post", UA: apptest.FirefoxUA, ASN: asn,
				ID: "o" + strconv.Itoa(len(rows)), Visitor: uint64(9000 + len(rows)), Source: viewcount.SourceBeacon},
				Dims:   viewcount.Dims{RefHost: ref, RefSource: ref, Browser: browser, OS: "Linux", Device: "desktop"},
				Reason: viewcount.Valid, Partition: 4000, Seq: uint64(len(rows) + 1),
				Visit: viewcount.VisitDelta{Set: true, ViewTime: tm, VisitStart: tm, EntryPage: "/post", EntryRefHost: ref,
					Visits: 1, Bounces: 1, EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}}
			rows = append(rows, v)
			if i >= engaged {
				continue
			}
			r := v
			r.Kind, r.ID, r.Time, r.Seq = viewcount.KindEngagement, "r"+strconv.Itoa(len(rows)), tm.Add(20*time.Millisecond), uint64(len(rows)+1)
			r.Engagement = viewcount.Engagement{EngagedMS: 15_000, Scroll: 50, AgeMS: 20_000}
			r.Visit = viewcount.VisitDelta{Set: true, ViewTime: tm, VisitStart: tm, EntryPage: "/post", EntryRefHost: ref,
				EngagedMS: 15_000, VisitMS: 20_000, Bounces: -1, EngagedFrom: -1, EngagedTo: viewcount.EngagedBucket(15_000),
				ScrollFrom: -1, ScrollTo: viewcount.ScrollBucket(50)}
			rows = append(rows, r)
		}
	}
	add(3320, "news.example", "Firefox", 300, 180)
	add(12345, markupRef, "Chrome", 400, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := storetest.InsertFed(ctx, m.Store, "dashboard-test-outliers", rows); err != nil {
		t.Fatalf("insert: %v", err)
	}

	b.do(t, "sign in",
		chromedp.Navigate("http://"+m.Addr()+"/dashboard/"+site),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	b.waitLoaded(t, "")
	lines := func(list string) []string {
		return evalJS[[]string](t, b, `Array.from(document.querySelectorAll('#outliers-`+list+` li')).map(li =>
  Array.from(li.children).map(c => c.textContent).join(' | '))`)
	}
	from := evalJS[string](t, b, `document.querySelector('#outliers-asn code') ? document.querySelector('#outliers-asn code').textContent : ''`)
	if want := "AS 12345: 400 views, 0.3 % engaged (site: 26 %) | viewcount correct add --site " + site + " --kind asn --value 12345 --from "; len(lines("asn")) != 1 ||
		!strings.HasPrefix(lines("asn")[0], want) {
		t.Errorf("networks = %q, want one line starting %q", lines("asn"), want)
	}
	if !strings.Contains(from, " --to ") || !strings.HasSuffix(from, `--why "…"`) {
		t.Errorf("correction %q: want the report's range and a --why", from)
	}
	if got := lines("referrer"); len(got) != 1 || !strings.HasPrefix(got[0], markupRef+": 400 views, 0.3 % engaged (site: 26 %) | viewcount correct add") {
		t.Errorf("referrers = %q, want the ring's", got)
	}
	if got := lines("browser"); len(got) != 1 || got[0] != "Chrome: 400 views, 0.3 % engaged (site: 26 %)" {
		t.Errorf("browsers = %q, want Chrome alone, without a correction", got)
	}
	if got := evalJS[string](t, b, `document.getElementById('outliers-site').textContent`); got != "Site: 700 views, 26 % engaged for 10 s or more. Listed: 100+ views, engaged less often than the site's." {
		t.Errorf("site line = %q", got)
	}
	b.screenshot(t, "dashboard-outliers.png")
	if got := evalJS[string](t, b, `String(document.querySelectorAll('.outliers img').length) + ' ' + String(window.__xss)`); got != "0 undefined" {
		t.Errorf("markup referrer: images made of it, window.__xss = %q; want 0 undefined", got)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
