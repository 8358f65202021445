package judge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestNewRulesConfig(t *testing.T) {
	f := func(cfg Config, ok bool) {
		t.Helper()
		_, err := NewRules(cfg, sitesOf{})
		if (err == nil) != ok {
			t.Errorf("NewRules(%+v) err = %v, want ok=%v", cfg, err, ok)
		}
	}
	f(Config{}, true)
	f(DefaultConfig(), true)
	f(Config{DuplicateWindow: time.Millisecond, RetryWindow: time.Hour, MaxKeys: 1}, true)
	f(Config{DuplicateWindow: -time.Second}, false)
	f(Config{RetryWindow: -time.Second}, false)
	f(Config{DuplicateWindow: time.Microsecond}, false)
	f(Config{MaxKeys: -1}, false)
	f(Config{ExtraBotPatterns: []string{"a("}}, false)
	f(Config{RateWindow: -time.Minute}, false)
	f(Config{RateWindow: time.Microsecond}, false)
	f(Config{RotationWindow: time.Millisecond}, false)
	f(Config{RotationWindow: 2 * time.Millisecond, RateWindow: time.Millisecond}, true)
	f(Config{VisitorRateLimit: -1}, false)
	f(Config{NetworkRateLimit: 65534}, true)
	f(Config{NetworkRateLimit: 65535}, false) // the counters saturate there
	f(Config{RotationMaxUAs: -1}, false)
	f(Config{RotationMinEvents: 70000}, false)
	f(Config{RotationMaxNetworks: -1}, false)
	f(Config{MaxScreenSize: -1}, false)
	f(Config{SpamReferrers: []string{"https://x.example/"}}, false)
	if _, err := NewRules(Config{}, nil); err == nil {
		t.Error("NewRules with nil sites: no error")
	}

	// Plus SettleWindow (2m) and a RateWindow (1m) for settling.
	r := newTestRules(t, Config{})
	if got, want := r.ReplayWindow(), 24*time.Hour+33*time.Minute; got != want {
		t.Errorf("ReplayWindow = %v, want %v", got, want)
	}
	// The longest stateful window decides.
	r = newTestRules(t, Config{DuplicateWindow: time.Minute, RateWindow: 5 * time.Minute, RetryWindow: time.Hour})
	if got, want := r.ReplayWindow(), time.Hour+10*time.Minute+2*time.Minute+5*time.Minute; got != want {
		t.Errorf("ReplayWindow = %v, want %v (2×RateWindow)", got, want)
	}
	r = newTestRules(t, Config{DuplicateWindow: time.Minute, RotationWindow: time.Hour, RetryWindow: time.Hour})
	if got, want := r.ReplayWindow(), 2*time.Hour+3*time.Minute; got != want {
		t.Errorf("ReplayWindow = %v, want %v (RotationWindow)", got, want)
	}
}

// TestJudgeOrder: when several rules fail, the first in the documented
// order decides, and rejected events leave no state behind.
func TestJudgeOrder(t *testing.T) {
	r := newTestRules(t, Config{VisitorRateLimit: 6, RotationMaxUAs: 1, RotationMinEvents: 1})
	const spam = "https://semalt.com/"
	ev := func(mod func(*viewcount.Event)) *viewcount.Event {
		e := &viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: uaChromeWin, ID: "a", Visitor: 1, Network: 1}
		mod(e)
		return e
	}
	f := func(e *viewcount.Event, want viewcount.Reason) {
		t.Helper()
		if got := r.Judge(e); got != want {
			t.Errorf("Judge(%+v) = %s, want %s", *e, got, want)
		}
	}
	f(ev(func(e *viewcount.Event) { e.UA = ""; e.Webdriver = true; e.Site = "nope.net" }), viewcount.EmptyUA)
	f(ev(func(e *viewcount.Event) { e.UA = "curl/8.5.0"; e.Webdriver = true; e.Site = "nope.net" }), viewcount.BotUA)
	f(ev(func(e *viewcount.Event) {
		e.Webdriver, e.Site, e.Source, e.Datacenter, e.Referrer = true, "nope.net", viewcount.SourceBeacon, true, spam
	}), viewcount.Headless)
	f(ev(func(e *viewcount.Event) {
		e.Site, e.Source, e.Datacenter, e.Referrer = "nope.net", viewcount.SourceBeacon, true, spam
	}), viewcount.BadHints)
	f(ev(func(e *viewcount.Event) { e.Site, e.Datacenter, e.Referrer = "nope.net", true, spam }), viewcount.Datacenter)
	f(ev(func(e *viewcount.Event) { e.Site, e.Referrer = "nope.net", spam }), viewcount.UnknownSite)
	f(ev(func(e *viewcount.Event) { e.Referrer = spam }), viewcount.BadReferrer)
	if s := r.Stats(); s.IDs != 0 || s.Views != 0 || s.RotationNetworks != 0 || s.SketchBytes != 0 {
		t.Errorf("rejected events left state: %+v", s)
	}
	f(ev(func(e *viewcount.Event) {}), viewcount.Valid)
	f(ev(func(e *viewcount.Event) {}), viewcount.DuplicateID) // a retry is a DuplicateID, not a Duplicate
	f(ev(func(e *viewcount.Event) { e.ID = "b" }), viewcount.Duplicate)
	f(ev(func(e *viewcount.Event) { e.ID = "" }), viewcount.Duplicate) // no id: no id check
	f(ev(func(e *viewcount.Event) { e.ID = ""; e.Page = "/x" }), viewcount.Valid)
	// Rotation before Duplicate, Rate before both; the retry is still a
	// retry and counts for neither.
	f(ev(func(e *viewcount.Event) { e.ID, e.UA = "c", uaFirefoxWin }), viewcount.NetworkRotation) // 5th view, 2nd UA
	f(ev(func(e *viewcount.Event) { e.ID = "d" }), viewcount.NetworkRotation)                     // a repeat, and the network is latched
	f(ev(func(e *viewcount.Event) { e.ID = "d" }), viewcount.DuplicateID)
	f(ev(func(e *viewcount.Event) { e.ID = "e" }), viewcount.Rate) // the 7th view
}

func TestJudgeWindows(t *testing.T) {
	r := newTestRules(t, Config{DuplicateWindow: 30 * time.Minute, RetryWindow: 24 * time.Hour})
	f := func(at time.Duration, site, page, id string, visitor uint64, want viewcount.Reason) {
		t.Helper()
		e := viewcount.Event{Time: t0.Add(at), Site: site, Page: page, UA: uaFirefoxWin, ID: id, Visitor: visitor}
		if got := r.Judge(&e); got != want {
			t.Errorf("at +%v %s%s id=%q visitor=%d: %s, want %s", at, site, page, id, visitor, got, want)
		}
	}
	const ms = time.Millisecond
	// Visitor+site+page window: just inside, exactly at, sliding.
	f(0, "example.com", "/a", "1", 1, viewcount.Valid)
	f(30*time.Minute-ms, "example.com", "/a", "2", 1, viewcount.Duplicate)
	f(60*time.Minute-ms, "example.com", "/a", "3", 1, viewcount.Valid) // exactly 30m after the last view
	f(60*time.Minute, "example.com", "/b", "4", 1, viewcount.Valid)    // same visitor, other page
	f(60*time.Minute, "example.com", "/a", "5", 2, viewcount.Valid)    // other visitor, same page
	f(60*time.Minute, "other.org", "/a", "6", 1, viewcount.Valid)      // same visitor and page, other site

	// Retries: the same id is a DuplicateID for 24h after its last sighting,
	// per site, and does not refresh the view window.
	f(2*time.Hour, "example.com", "/r", "r1", 3, viewcount.Valid)
	f(2*time.Hour+10*time.Second, "example.com", "/r", "r1", 3, viewcount.DuplicateID)
	f(2*time.Hour+29*time.Minute, "example.com", "/r", "r1", 3, viewcount.DuplicateID)
	f(2*time.Hour+30*time.Minute, "example.com", "/r", "r2", 3, viewcount.Valid) // 30m after the view, not the retry
	f(2*time.Hour, "other.org", "/r", "r1", 3, viewcount.Valid)                  // same id, other site
	f(26*time.Hour+29*time.Minute-ms, "example.com", "/r", "r1", 4, viewcount.DuplicateID)
	f(50*time.Hour+29*time.Minute-ms, "example.com", "/r", "r1", 4, viewcount.Valid) // exactly 24h after
	f(50*time.Hour+29*time.Minute, "example.com", "/r", "r1", 5, viewcount.DuplicateID)

	// Reset forgets everything.
	r.Reset()
	if s := r.Stats(); s.IDs != 0 || s.Views != 0 {
		t.Errorf("after Reset: %d ids, %d views", s.IDs, s.Views)
	}
	f(50*time.Hour+29*time.Minute, "example.com", "/r", "r1", 5, viewcount.Valid)
}

// stream returns a reproducible event sequence: n events over span, a mix of
// browsers (half through the beacon, with the hints their browser sends,
// all with the headers it sends), bots, reloads, retries (some many hours
// late), unknown sites, automation with bad hints, datacenter traffic,
// scripts with a browser's user agent, referrer spam, floods from one visitor
// and view farms rotating user agents on one network (these add events
// beyond n), views from pages on hosts their site does not allow, with
// receive times up to 2s out of order. Most views name their page's host
// (www. or the bare domain), one in ten none (a stripped Referer).
func stream(n int, span time.Duration, visitors int, seed uint64) []viewcount.Event {
	rnd := rand.New(rand.NewPCG(seed, 1))
	browsers := browserUAs(300)
	bots := []string{"", uaGooglebot, "curl/8.5.0", "python-requests/2.32.3", "Go-http-client/1.1",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.85 Safari/537.36",
		"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)"}
	referrers := []string{"", "", "https://www.google.com/", "https://news.ycombinator.com/item", "https://example.com/p/1"}
	sites := []string{"example.com", "other.org"}
	networks := max(1, visitors/4) // a few visitors per /24
	step := span / time.Duration(n)
	evs := make([]viewcount.Event, 0, n+n/20)
	for i := range n {
		at := t0.Add(time.Duration(i) * step)
		v := uint64(rnd.IntN(visitors))
		network := netID(v % uint64(networks))
		e := viewcount.Event{
			Time: at, Site: sites[v%2], Page: "/p/" + strconv.Itoa(rnd.IntN(50)), UA: browsers[v%uint64(len(browsers))],
			Referrer: referrers[rnd.IntN(len(referrers))], ID: "id-" + strconv.Itoa(i),
			Visitor: viewcount.NetworkKey(v*0x9E3779B97F4A7C15+1, network), Network: network, Source: viewcount.SourcePixel,
		}
		if rnd.IntN(2) == 0 {
			e.Source, e.Hints = viewcount.SourceBeacon, realHints(e.UA)
		}
		// Not drawn from rnd, which would change every other event.
		switch i % 10 {
		case 0:
		case 1, 2, 3, 4, 5:
			e.Origin = "www." + e.Site
		default:
			e.Origin = e.Site
		}
		switch x := rnd.IntN(1000); {
		case x < 100:
			e.UA = bots[rnd.IntN(len(bots))]
		case x < 110:
			e.Site = "unknown.net"
		case x < 120:
			e.Webdriver = true
		case x < 200 && i > 0: // a reload of a recent view
			p := evs[max(0, len(evs)-1-rnd.IntN(min(len(evs), 200)))]
			e.Visitor, e.Network, e.Site, e.Page, e.UA, e.Source, e.Hints, e.Origin = p.Visitor, p.Network, p.Site, p.Page, p.UA, p.Source, p.Hints, p.Origin
		case x < 240 && i > 0: // a retry, soon or up to a day and a half late
			p := evs[max(0, len(evs)-1-rnd.IntN(min(len(evs), n/2)))]
			p.Time = e.Time
			e = p
		case x < 245: // automation without the hints a browser sends
			e.Source, e.Hints = viewcount.SourceBeacon, viewcount.Hints{Present: true, ScreenW: 0, ScreenH: 0, Languages: 0}
		case x < 248:
			e.Datacenter = true
		case x < 250: // a script with a browser's user agent and none of its headers
			e.Headers = viewcount.HeadersSeen | viewcount.HeaderSecure
		case x < 255:
			e.Referrer = "http://forum.topic123.darodar.com/"
		case x < 257: // a flood: one visitor, 45 views in 45s
			for j := range 45 {
				f := e
				f.Time, f.Page, f.ID = at.Add(time.Duration(j)*time.Second), "/flood/"+strconv.Itoa(j), e.ID+"-f"+strconv.Itoa(j)
				evs = append(evs, f)
			}
		case x < 258: // a farm: one /24, a new user agent (so a new visitor) every 3s for 4 minutes
			farm := netID(1<<40 + uint64(i))
			for j := range 80 {
				ua := browsers[(i+j)%len(browsers)]
				evs = append(evs, viewcount.Event{Time: at.Add(time.Duration(j) * 3 * time.Second), Site: "example.com",
					Page: "/watch", UA: ua, ID: e.ID + "-farm" + strconv.Itoa(j), Source: viewcount.SourcePixel,
					Visitor: viewcount.NetworkKey(uint64(j)<<32, farm), Network: farm, Headers: realHeaders(ua), Origin: "example.com"})
			}
		case x < 262: // another site's page, or a developer's copy, carrying the tag
			e.Origin = [...]string{"fraud.test", "localhost", "127.0.0.1", e.Site + ".evil.test"}[x-258]
		}
		if e.Headers == 0 {
			e.Headers = realHeaders(e.UA)
		}
		evs = append(evs, e)
	}
	slices.SortStableFunc(evs, func(a, b viewcount.Event) int { return a.Time.Compare(b.Time) })
	for i := range evs {
		evs[i].Time = evs[i].Time.Add(-time.Duration(rnd.IntN(2000)) * time.Millisecond)
	}
	return evs
}

// netID turns a small network number into a network id as ingest makes
// them (a keyed hash: any 64-bit value, never 0).
func netID(n uint64) uint64 { return (n+1)*0xD6E8FEB86659FD93 | 1 }

// realHints returns the hints vc.js reports from a real browser with user
// agent ua on a secure page.
func realHints(ua string) viewcount.Hints {
	fam, _ := browserFamily(appendLower(nil, ua))
	return viewcount.Hints{Present: true, ScreenW: 1920, ScreenH: 1080, Languages: 2, TZ: true,
		Secure: true, UAData: fam == famChromium}
}

// realHeaders returns the header flags ingest records for a real browser
// with user agent ua on a secure page (see TestHeaderMismatch for the
// header sets behind them).
func realHeaders(ua string) viewcount.HeaderFlags {
	f := viewcount.HeadersSeen | viewcount.HeaderSecure | viewcount.HeaderFetchMeta | viewcount.HeaderFetchFits |
		viewcount.HeaderAccept | viewcount.HeaderAcceptLanguage
	if fam, _ := browserFamily(appendLower(nil, ua)); fam == famChromium {
		f |= viewcount.HeaderClientHints | viewcount.HeaderHintsAgree
	}
	return f
}

func browserUAs(n int) []string {
	uas := make([]string, 0, n)
	for i := range n {
		v := strconv.Itoa(100 + i%35)
		switch i % 6 {
		case 0:
			uas = append(uas, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/"+v+".0.0."+strconv.Itoa(i)+" Safari/537.36")
		case 1:
			uas = append(uas, "Mozilla/5.0 (Linux; Android "+strconv.Itoa(9+i%6)+"; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/"+v+".0.0."+strconv.Itoa(i)+" Mobile Safari/537.36")
		case 2:
			uas = append(uas, "Mozilla/5.0 (iPhone; CPU iPhone OS 17_"+strconv.Itoa(i%8)+" like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17."+strconv.Itoa(i%8)+" Mobile/15E148 Safari/604.1")
		case 3:
			uas = append(uas, "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:"+v+".0) Gecko/20100101 Firefox/"+v+"."+strconv.Itoa(i)+"")
		case 4:
			uas = append(uas, "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18."+strconv.Itoa(i)+" Safari/605.1.15")
		case 5:
			uas = append(uas, "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/"+v+".0.0.0 Safari/537.36 Edg/"+v+".0.0."+strconv.Itoa(i))
		}
	}
	return uas
}

func judgeAll(r *Rules, evs []viewcount.Event) []viewcount.Reason {
	out := make([]viewcount.Reason, len(evs))
	for i := range evs {
		out[i] = r.Judge(&evs[i])
	}
	return out
}

// withReports adds to a stream the engagement reports vc.js would send for
// some of its views (seconds to an hour and more later), with the wrong
// ones a broken or lying client sends: repeats, more time than passed,
// another page's, reports of views the rules rejected. Drawn from a source
// of their own, so the views stay what stream made them.
func withReports(evs []viewcount.Event, seed uint64) []viewcount.Event {
	rnd := rand.New(rand.NewPCG(seed, 2))
	out := slices.Clone(evs)
	for _, e := range evs {
		if rnd.IntN(10) >= 3 {
			continue
		}
		after := time.Duration(rnd.ExpFloat64() * float64(90*time.Second))
		r := e
		r.Kind, r.Source, r.Hints, r.Webdriver = viewcount.KindEngagement, viewcount.SourceBeacon, viewcount.Hints{}, false
		r.Time = e.Time.Add(after)
		engaged := uint32(rnd.Int64N(after.Milliseconds() + 1))
		switch x := rnd.IntN(100); {
		case x < 5:
			engaged = uint32(after.Milliseconds() + 10_000)
		case x < 8:
			r.Page += "/other"
		case x < 10:
			r.Time = e.Time.Add(viewcount.EngagementHorizon + time.Duration(rnd.IntN(20))*time.Minute)
		}
		r.Engagement = viewcount.Engagement{EngagedMS: engaged, Scroll: uint8(rnd.IntN(101)), AgeMS: uint32(r.Time.Sub(e.Time).Milliseconds())}
		out = append(out, r)
		if rnd.IntN(4) == 0 { // sent again, unchanged or with more
			again := r
			again.Time = r.Time.Add(time.Duration(rnd.IntN(60_000)) * time.Millisecond)
			if rnd.IntN(2) == 0 {
				again.Engagement.EngagedMS += uint32(rnd.IntN(5000))
			}
			out = append(out, again)
		}
	}
	slices.SortStableFunc(out, func(a, b viewcount.Event) int { return a.Time.Compare(b.Time) })
	return out
}

// judgeVisits judges a stream as validate does with settling off: views by
// the rules, then every verdict through the visit stage.
func judgeVisits(r *Rules, evs []viewcount.Event) []viewcount.Verdict {
	out := make([]viewcount.Verdict, len(evs))
	for i := range evs {
		out[i].Event = evs[i]
		if evs[i].Kind == viewcount.KindView {
			out[i].Reason = r.Judge(&evs[i])
		}
		r.Visit(&out[i])
	}
	return out
}

func TestDeterministic(t *testing.T) {
	evs := stream(20000, 72*time.Hour, 2000, 1)
	// An operator's correction: one page of one site, for a day.
	evs = withReports(evs, 1)
	cfg := Config{SettleWindow: -1, Corrections: []viewcount.Correction{{ID: "c1", Site: "example.com", Kind: viewcount.KindPath, Value: "/p/7", From: t0.Add(24 * time.Hour), To: t0.Add(48 * time.Hour)}}}
	r := newTestRules(t, cfg)
	first := judgeVisits(r, evs)
	r.Reset()
	if again := judgeVisits(r, evs); !slices.Equal(first, again) {
		t.Fatal("verdicts differ after Reset")
	}
	if fresh := judgeVisits(newTestRules(t, cfg), evs); !slices.Equal(first, fresh) {
		t.Fatal("verdicts differ in a new Rules")
	}
	counts := map[viewcount.Reason]int{}
	for _, v := range first {
		counts[v.Reason]++
	}
	t.Logf("verdicts: %v", counts)
	for _, reason := range viewcount.Reasons {
		if counts[reason] == 0 {
			t.Errorf("the stream never produced %s; the test exercises too little", reason)
		}
	}
}

// TestReplayRebuildsState is the restart invariant: a validator that stops
// at any point and rebuilds its state by replaying only from ReplayStart
// (plus the consumer's margin for out-of-order receive times) gives
// exactly the verdicts, and the visit stage's rows, an uninterrupted run
// gives.
func TestReplayRebuildsState(t *testing.T) {
	evs := withReports(stream(30000, 96*time.Hour, 1500, 2), 2)
	cfg := Config{SettleWindow: -1}
	want := judgeVisits(newTestRules(t, cfg), evs)
	// Resume at fixed points, and in the middle of the first floods and
	// farms, where the rate and rotation state matter most.
	resumes := []int{7000, 15000, 22222, 29000}
	for _, reason := range []viewcount.Reason{viewcount.Rate, viewcount.NetworkRotation} {
		found := 0
		for i := 1; i < len(want) && found < 3; i++ {
			if want[i].Reason == reason && want[i-1].Reason != reason {
				resumes = append(resumes, i, i-5)
				found++
			}
		}
		if found == 0 {
			t.Fatalf("the stream never produced %s", reason)
		}
	}
	for _, resume := range resumes {
		r := newTestRules(t, cfg)
		from := r.ReplayStart(evs[resume].Time).Add(-time.Minute)
		start := resume
		for start > 0 && !evs[start-1].Time.Before(from) {
			start--
		}
		judgeVisits(r, evs[start:resume])
		got := judgeVisits(r, evs[resume:])
		for i := range got {
			if got[i].Reason != want[resume+i].Reason || got[i].Visit != want[resume+i].Visit {
				t.Fatalf("resume at %d (replayed %d events): event %d got %s %+v, uninterrupted run %s %+v",
					resume, resume-start, resume+i, got[i].Reason, got[i].Visit, want[resume+i].Reason, want[resume+i].Visit)
			}
		}
	}
}

func TestRulesBounded(t *testing.T) {
	const maxKeys = 4096
	r := newTestRules(t, Config{MaxKeys: maxKeys})
	for i := range 3 * maxKeys {
		e := viewcount.Event{Time: t0.Add(time.Duration(i) * time.Millisecond), Site: "example.com",
			Page: "/" + strconv.Itoa(i), UA: uaSafariMac, ID: strconv.Itoa(i), Visitor: uint64(i)}
		if got := r.Judge(&e); got != viewcount.Valid {
			t.Fatalf("distinct event %d: %s", i, got)
		}
		if s := r.Stats(); s.IDs > maxKeys || s.Views > maxKeys {
			t.Fatalf("after %d events: %d ids, %d views, cap %d", i+1, s.IDs, s.Views, maxKeys)
		}
	}
	r.ids.check(t)
	r.views.check(t)
}

// BenchmarkValidate judges a realistic mix: ~300 distinct browser UAs, ~10%
// bots, reloads and retries, 100k visitors, a day of traffic per lap.
func BenchmarkValidate(b *testing.B) {
	lap := 26 * time.Hour
	evs := stream(1<<18, lap, 100_000, 3)
	n := len(evs)
	r := newTestRules(b, Config{})
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if i == n { // next lap: a day later, so retries of the last lap stay retries only at its end
			b.StopTimer()
			for j := range evs {
				evs[j].Time = evs[j].Time.Add(lap)
			}
			i = 0
			b.StartTimer()
		}
		r.Judge(&evs[i])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
}

// BenchmarkClassifyUncached is the cost of a UA the cache has not seen: a
// browser, a built-in bot token, a UA no browser sends (the browser model
// rejects it; a URL, or "compatible"), and a browser-shaped UA holding a
// crawler's word ("bot" in a phone's name), the one case that still pays
// for Crawler-Detect's patterns.
func BenchmarkClassifyUncached(b *testing.B) {
	m, _ := newUAMatcher(nil, false)
	for _, c := range []struct{ name, ua string }{
		{"browser", uaChromeAndroid},
		{"bot-token", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"},
		{"shape", "Mozilla/5.0 (compatible; Qwantify/2.4w; +https://www.qwant.com/)/2.4w"},
		{"model", "Mozilla/5.0 (compatible; Qwantify/2.4w)/2.4w"},
		{"crawlerdetect", "Mozilla/5.0 (Linux; Android 7.0; M bot 54 Build/NRD90M) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/58.0.3029.83 Mobile Safari/537.36"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = m.classify(c.ua)
			}
		})
	}
}

func ExampleRules_Judge() {
	rules, _ := NewRules(DefaultConfig(), sitesOf{"example.com": true})
	e := viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: uaFirefoxWin, ID: "e1", Visitor: 7}
	fmt.Println(rules.Judge(&e))
	fmt.Println(rules.Judge(&e)) // the client retried
	e.ID, e.Time = "e2", e.Time.Add(time.Minute)
	fmt.Println(rules.Judge(&e)) // a reload a minute later
	e.UA = "curl/8.5.0"
	fmt.Println(rules.Judge(&e))
	// Output:
	// valid
	// duplicate_id
	// duplicate
	// bot_ua
}
