package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestInvalidEngagementOutliers: on a written history, /invalid lists the
// AS numbers, referrer hosts and browsers whose counted views were engaged
// less often than the site's, exact: a farm's network with 400 views and
// one engaged stands out against the site's 321 of 1,149; a network under
// the floor (99 views) and AS 0 (unknown) are left out, unless the floor
// is lowered; browsers rank by the engaged views they lack, not by their
// share. The numbers come from the rollups (views_raw emptied, the same
// answer), follow the site's engaged_after, and judge nothing: every
// verdict stays as it was.
func TestInvalidEngagementOutliers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const site = "eng.example"
	if _, _, err := f.sites.Add(ctx, site); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var rows []viewcount.Verdict
	// add writes n views of one network, referrer and browser, engaged of
	// them for 15 s and short of them for 5 s (each view's report 20 s
	// after it), the rest never reporting.
	add := func(asn uint32, ref, browser string, reason viewcount.Reason, n, engaged, short int) {
		for i := range n {
			tm := at.Add(time.Duration(len(rows)) * 2 * time.Second)
			v := viewcount.Verdict{Event: viewcount.Event{Time: tm, Site: site, Page: "/", UA: "Mozilla/5.0", ASN: asn,
				Visitor: uint64(len(rows)), Source: viewcount.SourceBeacon},
				Dims: viewcount.Dims{RefHost: ref, Browser: browser, Device: "desktop"}, Reason: reason, Seq: uint64(len(rows) + 1)}
			if reason == viewcount.Valid {
				v.Visit = viewcount.VisitDelta{Set: true, ViewTime: tm, VisitStart: tm, EntryPage: "/", EntryRefHost: ref, Visits: 1, Bounces: 1,
					EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
			}
			rows = append(rows, v)
			ms := uint32(0)
			switch {
			case i < engaged:
				ms = 15_000
			case i < engaged+short:
				ms = 5_000
			default:
				continue
			}
			r := v
			r.Kind, r.Time, r.Seq = viewcount.KindEngagement, tm.Add(20*time.Second), uint64(len(rows)+1)
			r.Engagement = viewcount.Engagement{EngagedMS: ms, Scroll: 50, AgeMS: 20_000}
			r.Visit = viewcount.VisitDelta{Set: true, ViewTime: tm, VisitStart: tm, EntryPage: "/", EntryRefHost: ref,
				EngagedMS: int32(ms), VisitMS: 20_000, EngagedFrom: -1, EngagedTo: viewcount.EngagedBucket(ms),
				ScrollFrom: -1, ScrollTo: viewcount.ScrollBucket(50)}
			rows = append(rows, r)
		}
	}
	add(3320, "news.example", "Firefox", viewcount.Valid, 300, 180, 0) // 60 %
	add(7922, "", "Chrome", viewcount.Valid, 200, 140, 20)             // 70 % (80 % from 5 s)
	add(12345, "ring.example", "Chrome", viewcount.Valid, 400, 1, 0)   // the farm: 0.25 %
	add(64500, "spam.example", "Edge", viewcount.Valid, 99, 0, 0)      // under the floor
	add(0, "", "Safari", viewcount.Valid, 150, 0, 0)                   // unknown network
	add(12345, "ring.example", "Chrome", viewcount.BotUA, 50, 0, 0)    // rejected: no view
	if err := storetest.InsertFed(ctx, f.store, "", rows); err != nil {
		t.Fatal(err)
	}

	get := func(query string) invalidReport {
		t.Helper()
		r := httptest.NewRequest("GET", "/v1/sites/"+site+"/invalid"+query, nil)
		r.Header.Set("Authorization", "Bearer "+testAdmin)
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", query, w.Code, w.Body)
		}
		var rep invalidReport
		if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.EngagementOutliers == nil {
			t.Fatalf("%s: no engagement_outliers in %s", query, w.Body)
		}
		return rep
	}
	const views, engaged = 1149, 321
	siteShare := float64(engaged) / views
	out := func(value string, n, e uint64, missing int64, exclude *exclusion) engagementOutlier {
		return engagementOutlier{Value: value, Views: n, EngagedViews: e, EngagedShare: float64(e) / float64(n),
			SiteEngagedShare: siteShare, MissingEngaged: missing, Exclude: exclude}
	}
	// missing: round(views × 321 / 1149) − engaged.
	want := engagementOutliers{EngagedAfter: 10, MinViews: 100, Views: views, EngagedViews: engaged, EngagedShare: siteShare,
		ByASN:      []engagementOutlier{out("12345", 400, 1, 111, &exclusion{"asn", "12345"})},
		ByReferrer: []engagementOutlier{out("ring.example", 400, 1, 111, &exclusion{"referrer", "ring.example"})},
		ByBrowser:  []engagementOutlier{out("Safari", 150, 0, 42, nil), out("Chrome", 600, 141, 27, nil)}}
	check := func(query string, want engagementOutliers) {
		t.Helper()
		rep := get(query)
		if !reflect.DeepEqual(*rep.EngagementOutliers, want) {
			g, _ := json.Marshal(rep.EngagementOutliers)
			w, _ := json.Marshal(want)
			t.Errorf("%s:\n got %s\nwant %s", query, g, w)
		}
	}
	// Whole days (day rows), a day's hours, and days with hours around them.
	for _, q := range []string{"?from=2026-11-27&to=2026-11-27", "?from=2026-11-27T09:00:00Z&to=2026-11-27T13:00:00Z",
		"?from=2026-11-26T21:00:00Z&to=2026-11-28T03:00:00Z"} {
		check(q, want)
	}
	// A lower floor lets the small network and its referrer in, after the farm.
	low := want
	low.MinViews = 50
	low.ByASN = append(low.ByASN, out("64500", 99, 0, 28, &exclusion{"asn", "64500"}))
	low.ByReferrer = append(low.ByReferrer, out("spam.example", 99, 0, 28, &exclusion{"referrer", "spam.example"}))
	low.ByBrowser = []engagementOutlier{out("Safari", 150, 0, 42, nil), out("Edge", 99, 0, 28, nil), out("Chrome", 600, 141, 27, nil)}
	check("?from=2026-11-27&to=2026-11-27&min_views=50", low)

	// Nothing is rejected for it: the verdicts are the ones written.
	rep := get("?from=2026-11-27&to=2026-11-27")
	if rep.Valid != views || rep.Rejected != 50 || !reflect.DeepEqual(rep.ByReason, reasonCounts{"bot_ua": 50}) {
		t.Errorf("verdicts: valid %d rejected %d %v, want 1149 valid and 50 bot_ua", rep.Valid, rep.Rejected, rep.ByReason)
	}
	res, err := f.store.Query(ctx, "SELECT verdict, toString(count()) FROM views_raw WHERE kind = 0 GROUP BY verdict ORDER BY verdict", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.TextRows(); !reflect.DeepEqual(got, [][]string{{"bot_ua", "50"}, {"valid", "1149"}}) {
		t.Errorf("views_raw verdicts %v", got)
	}

	// The rollups alone answer (test-only SQL).
	if err := f.store.Exec(ctx, "TRUNCATE TABLE views_raw", nil); err != nil {
		t.Fatal(err)
	}
	check("?from=2026-11-27&to=2026-11-27", want)

	// engaged_after 5 s: the engaged public count's definition, so the
	// short views count too (site 341 of 1,149, Chrome 161 of 600).
	five := 5
	if _, err := f.sites.SetEngagement(ctx, site, five, nil); err != nil {
		t.Fatal(err)
	}
	rep = get("?from=2026-11-27&to=2026-11-27")
	o := rep.EngagementOutliers
	if o.EngagedAfter != 5 || o.EngagedViews != 341 || len(o.ByBrowser) != 2 || o.ByBrowser[0].Value != "Safari" || o.ByBrowser[0].MissingEngaged != 45 ||
		o.ByBrowser[1].EngagedViews != 161 || o.ByBrowser[1].MissingEngaged != 17 {
		g, _ := json.Marshal(o)
		t.Errorf("engaged_after 5: %s, want 341 engaged, Safari missing 45, Chrome 161 engaged missing 17", g)
	}

	for _, q := range []string{"?min_views=0", "?min_views=x", "?min_views=1000000001"} {
		r := httptest.NewRequest("GET", "/v1/sites/"+site+"/invalid"+q, nil)
		r.Header.Set("Authorization", "Bearer "+testAdmin)
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		if w.Code != 400 || !strings.Contains(w.Body.String(), "min_views") {
			t.Errorf("%s: %d %s, want 400 naming min_views", q, w.Code, w.Body)
		}
	}
}
