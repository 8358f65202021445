package judge

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// TestExplain: each rule names what it saw, the way an operator asks "why
// was this rejected?": the list entry, the header missing, the AS.
func TestExplain(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	cs := []viewcount.Correction{
		{ID: "cpromo", Site: "example.com", Kind: viewcount.KindPath, Value: "/promo/*", From: t0, To: t0.Add(time.Hour)},
		{ID: "capp", Site: "example.com", Kind: viewcount.KindAllow, Value: "ua=MyApp/", From: t0, To: t0.Add(time.Hour)},
	}
	r := newTestRules(t, Config{Corrections: cs})
	view := func(ua string, h viewcount.HeaderFlags) viewcount.Event {
		return viewcount.Event{Time: t0.Add(time.Minute), Site: "example.com", Page: "/", UA: ua, Visitor: 1, Network: 1, Headers: h}
	}
	f := func(name string, e viewcount.Event, verdict viewcount.Reason, rule viewcount.Reason, decision string, evidence ...string) {
		t.Helper()
		x := r.Explain(&e)
		if x.Verdict != verdict {
			t.Errorf("%s: verdict %s, want %s", name, x.Verdict, verdict)
		}
		if x.Rules == "" || len(x.Steps) != 14 {
			t.Errorf("%s: rules %q, %d steps, want a version and 14", name, x.Rules, len(x.Steps))
		}
		for _, s := range x.Steps {
			if s.Rule != rule {
				continue
			}
			if s.Decision != decision {
				t.Errorf("%s: %s %s, want %s (%s)", name, s.Rule, s.Decision, decision, s.Evidence)
			}
			for _, w := range evidence {
				if !strings.Contains(s.Evidence, w) {
					t.Errorf("%s: %s's evidence %q lacks %q", name, s.Rule, s.Evidence, w)
				}
			}
			return
		}
		t.Errorf("%s: no step for %s", name, rule)
	}
	f("token", view("curl/8.5.0", scriptRequest), viewcount.BotUA, viewcount.BotUA, Rejects, `the built-in token "curl/"`)
	f("contact", view("Mozilla/5.0 (compatible; ExampleBot; +https://bot.example/about)", scriptRequest), viewcount.BotUA, viewcount.BotUA, Rejects,
		`a contact`, `https://bot.example/about`)
	f("crawlerdetect", view("Mozilla/5.0 (Linux; Android 7.0; M bot 54 Build/NRD90M) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/58.0.3029.83 Mobile Safari/537.36 Qwantify", browserRequest),
		viewcount.BotUA, viewcount.BotUA, Rejects, "Crawler-Detect", "Qwantify")
	f("impossible", view("Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0.0.0 Safari/537.36", browserRequest), viewcount.BotUA, viewcount.BotUA, Rejects, "Chrome/ without AppleWebKit")
	f("browser", view(uaFirefoxWin, browserRequest), viewcount.Valid, viewcount.BotUA, Passes, "a browser's user agent")
	f("browser, then", view(uaFirefoxWin, browserRequest), viewcount.Valid, viewcount.Rate, Stateful, "30 views a visitor")
	weak := "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 NAVER(inapp; search; 2000; 12.5.10; 14PRO)"
	f("weak, a browser's request", view(weak, browserRequest), viewcount.Valid, viewcount.HeaderMismatch, Passes, "Accept-Language")
	f("weak, a script's", view(weak, scriptRequest), viewcount.HeaderMismatch, viewcount.HeaderMismatch, Rejects,
		"no Accept-Language, with a user agent the browser model does not recognise")
	f("weak evidence", view(weak, scriptRequest), viewcount.HeaderMismatch, viewcount.BotUA, Passes, "weak signal")
	f("no language", view(uaFirefoxWin, browserRequest&^viewcount.HeaderAcceptLanguage), viewcount.HeaderMismatch, viewcount.HeaderMismatch, Rejects,
		"no Accept-Language, which every browser sends")
	f("after the verdict", view("curl/8.5.0", scriptRequest), viewcount.BotUA, viewcount.Rate, Unreached)

	cloud := view(uaFirefoxWin, browserRequest)
	cloud.ASN = 16509
	f("datacenter", cloud, viewcount.Datacenter, viewcount.Datacenter, Rejects, "AS16509 is a hosting network", "Amazon")
	cloud.ASN = 3320
	f("an ISP", cloud, viewcount.Valid, viewcount.Datacenter, Passes, "AS3320, not a hosting network")

	spam := view(uaFirefoxWin, browserRequest)
	spam.Referrer = "https://x.semalt.com/crawler.php"
	f("spam", spam, viewcount.BadReferrer, viewcount.BadReferrer, Rejects, `"semalt.com"`)

	promo := view(uaFirefoxWin, browserRequest)
	promo.Page = "/promo/x"
	f("excluded", promo, viewcount.Excluded, viewcount.Excluded, Rejects, "cpromo")

	app := view("Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MyApp/2.1 (+https://myapp.example)", browserRequest)
	f("allowed", app, viewcount.Valid, viewcount.BotUA, Allowed, "https://myapp.example", "allowed by correction capp")

	other := view(uaFirefoxWin, browserRequest)
	other.Site = "nowhere.example"
	f("unknown site", other, viewcount.UnknownSite, viewcount.UnknownSite, Rejects, `"nowhere.example" is not a registered site`)

	foreign := view(uaFirefoxWin, browserRequest)
	foreign.Origin = "busy-page.test"
	f("foreign origin", foreign, viewcount.ForeignOrigin, viewcount.ForeignOrigin, Rejects, `"busy-page.test" is not among the site's hostnames`)
	foreign.Origin = "blog.example.com"
	f("own subdomain", foreign, viewcount.Valid, viewcount.ForeignOrigin, Passes, `"blog.example.com" is among`)
	f("no page host", view(uaFirefoxWin, browserRequest), viewcount.Valid, viewcount.ForeignOrigin, Passes, "no evidence")

	wd := view(uaFirefoxWin, browserRequest)
	wd.Webdriver = true
	f("webdriver", wd, viewcount.Headless, viewcount.Headless, Rejects, "navigator.webdriver")
}

// TestExplainAgreesWithJudge is the property that keeps Explain honest:
// for the first view a validator sees (no earlier views, so no stateful
// rule can reject it), Explain's verdict is Judge's, over random user
// agents, requests, hints, networks, referrers, pages and corrections.
func TestExplainAgreesWithJudge(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	cfg := Config{Corrections: []viewcount.Correction{
		{ID: "cpromo", Site: "example.com", Kind: viewcount.KindPath, Value: "/promo/*", From: t0, To: t0.Add(time.Hour)},
		{ID: "cinsta", Site: "example.com", Kind: viewcount.KindAllow, Value: "ua=instagram&reason=bot_ua", From: t0, To: t0.Add(time.Hour)},
		{ID: "caws", Site: "example.com", Kind: viewcount.KindAllow, Value: "asn=16509", From: t0, To: t0.Add(30 * time.Minute)},
	}, ExtraBotPatterns: []string{`Instagram \d`}}
	explainer := newTestRules(t, cfg)
	uas := []string{"", "curl/8.5.0", uaFirefoxWin, uaChromeWin, uaChromeAndroid,
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 354.0.0.27.90 (iPhone15,3; iOS 18_1; en_GB)",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Nintendo Switch; WifiWebAuthApplet) AppleWebKit/606.4 (KHTML, like Gecko) NF/6.0.1.15.4 NintendoBrowser/5.1.0.20393",
		"Nokia6300/2.0 (05.00) Profile/MIDP-2.0 Configuration/CLDC-1.1", "python-requests/2.31", "Java/17.0.2",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15"}
	fresh := newTestRules(t, cfg)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 5000 {
		e := viewcount.Event{Time: t0.Add(time.Duration(rng.IntN(3600)) * time.Second), Site: []string{"example.com", "other.org", "nowhere.example"}[rng.IntN(3)],
			Page: []string{"/", "/promo/a", "/b"}[rng.IntN(3)], UA: uas[rng.IntN(len(uas))], Visitor: uint64(i), Network: uint64(i),
			Headers: viewcount.HeaderFlags(rng.Uint32() & 0x1ff), ASN: []uint32{0, 3320, 16509}[rng.IntN(3)],
			Referrer: []string{"", "https://semalt.com/", "https://news.example/"}[rng.IntN(3)], Webdriver: rng.IntN(20) == 0,
			Origin: []string{"", "example.com", "www.other.org", "localhost", "busy-page.test"}[rng.IntN(5)]}
		if rng.IntN(2) == 0 {
			e.Source = viewcount.SourceBeacon
			e.Hints = viewcount.Hints{Present: rng.IntN(10) > 0, ScreenW: uint16(rng.IntN(2000)), ScreenH: uint16(rng.IntN(1200)),
				Languages: uint8(rng.IntN(3)), UAData: rng.IntN(2) == 0, Secure: rng.IntN(2) == 0, Window: rng.IntN(2) == 0}
		}
		fresh.Reset() // the first view it sees
		judged := e
		want := fresh.Judge(&judged)
		if got := explainer.Explain(&e); got.Verdict != want {
			t.Fatalf("event %d (%+v): Explain says %s, Judge %s\n%+v", i, e, got.Verdict, want, got.Steps)
		}
	}
}
