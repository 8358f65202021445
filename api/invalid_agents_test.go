package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

const (
	uaInstaIOS = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 385.0.0.21.88 (iPhone15,3; iOS 18_5; en_US; en; scale=3.00; 1290x2796; 758384530)"
	uaInstaAnd = "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/128.0.6613.127 Mobile Safari/537.36 Instagram 346.0.0.34.91 Android (34/14; 420dpi; 1080x2205; Google/google; Pixel 8; shiba; shiba; en_US; 634262227)"
	uaGoogle   = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaChrome   = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	uaXSS      = `Mozilla/5.0 <img src=x onerror=alert(1)></script><script>alert(2)</script>`
)

// TestInvalidTopRejected: the report's top user agents and classes per
// reason, from a generated history on the real store: exact lists and
// counts, most first (ties by text), at most 10 agents and 5 classes per
// reason, long agents cut on a character boundary and marked, the newest
// classification of an agent, and nothing of valid views, other sites or
// other days, all read from the rollups. A site without rejections answers
// empty objects.
func TestInvalidTopRejected(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const site = "agents.example"
	_, token, err := f.sites.Add(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	_, quietToken, err := f.sites.Add(ctx, "quiet.example")
	if err != nil {
		t.Fatal(err)
	}
	day1 := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	// Cut at 300 bytes, the odd prefix puts byte 300 inside an "é": the
	// answer stops before it, at 299.
	long := "Mozilla/5.0 x" + strings.Repeat("é", 200)
	exact300 := strings.Repeat("a", 300)

	var rows []viewcount.Verdict
	add := func(s string, at time.Time, r viewcount.Reason, ua, browser, device string, n int) {
		for range n {
			rows = append(rows, viewcount.Verdict{
				Event: viewcount.Event{Time: at.Add(time.Duration(len(rows)) * time.Second), Site: s, Page: "/", UA: ua,
					Visitor: uint64(len(rows)), Source: viewcount.SourcePixel},
				Reason: r, Seq: uint64(len(rows) + 1), Dims: viewcount.Dims{Browser: browser, Device: device},
			})
		}
	}
	in := func(r viewcount.Reason, ua, browser, device string, n int) {
		add(site, day1, r, ua, browser, device, n)
	}
	in(viewcount.Valid, uaChrome, "Chrome", "desktop", 50)
	// bot_ua: 14 agents, so the top 10 leave 4 out; a tie (12) inside it.
	in(viewcount.BotUA, uaInstaIOS, "Instagram", "mobile", 41)
	in(viewcount.BotUA, uaInstaAnd, "Instagram", "mobile", 25)
	in(viewcount.BotUA, "curl/8.5.0", "", "", 1) // classified before the device class existed…
	in(viewcount.BotUA, "curl/8.5.0", "", "other", 29)
	in(viewcount.BotUA, uaGoogle, "", "other", 12)
	for i := range 10 { // scanner-00 12, scanner-01 11, …, scanner-09 3
		in(viewcount.BotUA, fmt.Sprintf("scanner-%02d/1.0", i), "Chrome", "desktop", 12-i)
	}
	// rate: 7 classes, so the top 5 leave 2 out; 7 agents, all shown.
	for i, b := range []string{"Chrome", "Firefox", "Safari", "Edge", "Opera", "Samsung Internet", "Yandex"} {
		in(viewcount.Rate, "agent-"+b, b, "desktop", 7-i)
	}
	in(viewcount.Headless, long, "", "other", 2)
	in(viewcount.Headless, exact300, "", "other", 1)
	in(viewcount.Headless, uaXSS, "", "other", 3)
	in(viewcount.Datacenter, "python-requests/2.32", "", "other", 3)
	// Not in the answer: another site, the day after the range.
	add("other.example", day1, viewcount.BotUA, uaInstaIOS, "Instagram", "mobile", 100)
	add(site, day1.AddDate(0, 0, 3), viewcount.BotUA, uaInstaAnd, "Instagram", "mobile", 100)
	if err := storetest.InsertFed(ctx, f.store, "", rows); err != nil {
		t.Fatal(err)
	}

	type report struct {
		ByReason      map[string]uint64       `json:"by_reason"`
		TopUserAgents map[string][]agentCount `json:"top_user_agents"`
		TopClasses    map[string][]classCount `json:"top_classes"`
	}
	get := func(site, token string) (report, string) {
		t.Helper()
		r := httptest.NewRequest("GET", "/v1/sites/"+site+"/invalid?from=2026-11-27&to=2026-11-28", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", site, w.Code, w.Body)
		}
		var rep report
		if err := json.Unmarshal(w.Body.Bytes(), &rep); err != nil {
			t.Fatalf("%s: %v\n%s", site, err, w.Body)
		}
		return rep, w.Body.String()
	}
	// What the report says comes from rejected_rollup and dim_rollup:
	// views_raw's rows gone (test-only SQL), it says the same.
	if err := f.store.Exec(ctx, "TRUNCATE TABLE views_raw", nil); err != nil {
		t.Fatal(err)
	}
	rep, body := get(site, token)

	ag := func(ua, browser, device string, n uint64) agentCount {
		return agentCount{UA: ua, Browser: browser, Device: device, Events: n}
	}
	wantBot := []agentCount{
		ag(uaInstaIOS, "Instagram", "mobile", 41),
		ag("curl/8.5.0", "", "other", 30), // the newest row's class
		ag(uaInstaAnd, "Instagram", "mobile", 25),
		ag(uaGoogle, "", "other", 12), // "Mozilla…" sorts before "scanner-00…"
		ag("scanner-00/1.0", "Chrome", "desktop", 12),
	}
	for i := 1; i <= 5; i++ {
		wantBot = append(wantBot, ag(fmt.Sprintf("scanner-%02d/1.0", i), "Chrome", "desktop", uint64(12-i)))
	}
	var wantRate []agentCount
	for i, b := range []string{"Chrome", "Firefox", "Safari", "Edge", "Opera", "Samsung Internet", "Yandex"} {
		wantRate = append(wantRate, ag("agent-"+b, b, "desktop", uint64(7-i)))
	}
	wantAgents := map[string][]agentCount{
		"bot_ua": wantBot,
		"rate":   wantRate,
		"headless": {
			ag(uaXSS, "", "other", 3),
			{UA: long[:299], Truncated: true, Device: "other", Events: 2},
			ag(exact300, "", "other", 1),
		},
		"datacenter": {ag("python-requests/2.32", "", "other", 3)},
	}
	if !reflect.DeepEqual(rep.TopUserAgents, wantAgents) {
		t.Errorf("top_user_agents:\n got %+v\nwant %+v", rep.TopUserAgents, wantAgents)
	}
	cl := func(browser, device string, n uint64) classCount { return classCount{browser, device, n} }
	wantClasses := map[string][]classCount{
		// The scanners: 12 + 11 + … + 3 = 75.
		"bot_ua":     {cl("Chrome", "desktop", 75), cl("Instagram", "mobile", 66), cl("", "other", 41), cl("", "", 1)},
		"rate":       {cl("Chrome", "desktop", 7), cl("Firefox", "desktop", 6), cl("Safari", "desktop", 5), cl("Edge", "desktop", 4), cl("Opera", "desktop", 3)},
		"headless":   {cl("", "other", 6)},
		"datacenter": {cl("", "other", 3)},
	}
	if !reflect.DeepEqual(rep.TopClasses, wantClasses) {
		t.Errorf("top_classes:\n got %+v\nwant %+v", rep.TopClasses, wantClasses)
	}
	if rep.ByReason["bot_ua"] != 41+25+30+12+75 {
		t.Errorf("by_reason = %v", rep.ByReason)
	}
	// The agent's markup travels as JSON escapes, never as raw tags.
	if strings.Contains(body, "<img") || strings.Contains(body, "</script>") {
		t.Errorf("the answer holds raw markup from a user agent:\n%s", body)
	}
	if len(long[:299]) != 299 || !strings.HasSuffix(rep.TopUserAgents["headless"][1].UA, "é") {
		t.Errorf("long agent cut to %q", rep.TopUserAgents["headless"][1].UA)
	}

	// A site with no rejected events: empty objects, never null.
	_, body = get("quiet.example", quietToken)
	for _, field := range []string{`"top_user_agents":{}`, `"top_classes":{}`, `"by_reason":{}`, `"datacenter_by_asn":[]`} {
		if !strings.Contains(body, field) {
			t.Errorf("quiet site: no %s in %s", field, body)
		}
	}
}

func TestCapUA(t *testing.T) {
	f := func(in, want string, cut bool) {
		t.Helper()
		if got, gotCut := capUA(in); got != want || gotCut != cut {
			t.Errorf("capUA(%d bytes) = %d bytes %q, %v; want %d bytes, %v", len(in), len(got), got, gotCut, len(want), cut)
		}
	}
	a300 := strings.Repeat("a", 300)
	f("", "", false)
	f("curl/8.5.0", "curl/8.5.0", false)
	f(a300, a300, false)
	f(a300+"b", a300, true)
	f(a300[:299]+"é", a300[:299], true)      // "é" would end at byte 301
	f(a300[:298]+"é", a300[:298]+"é", false) // ends at byte 300
	f(a300[:297]+"😀", a300[:297], true)      // 4 bytes from 297
	f(a300[:296]+"😀x", a300[:296]+"😀", true)
}
