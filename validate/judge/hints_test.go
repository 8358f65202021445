package judge

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

var (
	uaInstagramAndroid = "Mozilla/5.0 (Linux; Android 13; SM-A536B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 Instagram 357.0.0.25.101 Android"
	uaFacebookIOS      = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/474.0.0.34.109;FBBV/636315041;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]"
	uaEdgeIOS          = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 EdgiOS/131.0.2903.68 Mobile/15E148 Safari/605.1.15"
	uaFirefoxIOS       = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/133.0 Mobile/15E148 Safari/605.1.15"
	uaChrome85         = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/85.0.4183.121 Safari/537.36"
	uaYandex           = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 YaBrowser/24.10.0.0 Safari/537.36"
)

func TestBrowserFamily(t *testing.T) {
	f := func(ua string, want uaFamily, wantMajor int) {
		t.Helper()
		fam, major := browserFamily(appendLower(nil, ua))
		if fam != want || major != wantMajor {
			t.Errorf("browserFamily(%q) = %d %d, want %d %d", ua, fam, major, want, wantMajor)
		}
	}
	for _, ua := range []string{uaChromeWin, uaChromeMac, uaChromeLinux, uaChromeAndroid, uaEdgeWin, uaEdgeAndroid} {
		f(ua, famChromium, 131)
	}
	f(uaOpera, famChromium, 130)
	f(uaSamsung, famChromium, 125)
	f(uaChrome85, famChromium, 85)
	for _, ua := range []string{uaFirefoxWin, uaFirefoxMac, uaFirefoxLinux, uaFirefoxAndroid} {
		f(ua, famFirefox, 133)
	}
	for _, ua := range []string{uaSafariMac, uaSafariIPhone, uaSafariIPad} {
		f(ua, famSafari, 18)
	}
	// Not certain enough to judge by hints.
	for _, ua := range []string{uaChromeIOS, uaEdgeIOS, uaFirefoxIOS, uaInstagramAndroid, uaFacebookIOS, uaYandex,
		"curl/8.5.0", "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 (compatible; x)"} {
		f(ua, famOther, 0)
	}
}

// TestBadHints: real browsers with the hints they really send pass; missing
// or impossible combinations are BadHints. Hints are judged only for the
// beacon.
func TestBadHints(t *testing.T) {
	r := newTestRules(t, Config{})
	var visitor uint64
	desktop := viewcount.Hints{Present: true, ScreenW: 1920, ScreenH: 1080, Languages: 2, TZ: true, Secure: true}
	phone := viewcount.Hints{Present: true, ScreenW: 390, ScreenH: 844, Languages: 1, TZ: true, Secure: true}
	withUAData := func(h viewcount.Hints) viewcount.Hints { h.UAData = true; return h }
	f := func(ua string, h viewcount.Hints, want viewcount.Reason) {
		t.Helper()
		visitor++
		e := viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: ua, Visitor: visitor, Network: visitor,
			Source: viewcount.SourceBeacon, Hints: h}
		if got := r.Judge(&e); got != want {
			t.Errorf("Judge(%q, %+v) = %s, want %s", ua, h, got, want)
		}
	}
	// Real browsers, as they are.
	for _, ua := range []string{uaChromeWin, uaChromeMac, uaChromeLinux, uaEdgeWin, uaOpera} {
		f(ua, withUAData(desktop), viewcount.Valid)
	}
	for _, ua := range []string{uaChromeAndroid, uaEdgeAndroid, uaSamsung} {
		f(ua, withUAData(phone), viewcount.Valid)
	}
	for _, ua := range []string{uaFirefoxWin, uaFirefoxMac, uaFirefoxLinux, uaSafariMac} {
		f(ua, desktop, viewcount.Valid)
	}
	for _, ua := range []string{uaFirefoxAndroid, uaSafariIPhone, uaSafariIPad, uaChromeIOS, uaEdgeIOS, uaFirefoxIOS, uaFacebookIOS} {
		f(ua, phone, viewcount.Valid)
	}
	f(uaInstagramAndroid, phone, viewcount.Valid) // a WebView may lack userAgentData
	f(uaInstagramAndroid, withUAData(phone), viewcount.Valid)
	f(uaYandex, desktop, viewcount.Valid) // a fork we do not judge
	insecure := desktop
	insecure.Secure = false
	f(uaChromeWin, insecure, viewcount.Valid) // no userAgentData on http pages
	f(uaChrome85, desktop, viewcount.Valid)   // before Chrome 90
	f(uaChromeWin, viewcount.Hints{Present: true, ScreenW: 16384, ScreenH: 16384, Languages: 1, UAData: true, Secure: true}, viewcount.Valid)
	f(uaChromeWin, viewcount.Hints{Present: true, ScreenW: 1, ScreenH: 1, Languages: 255, UAData: true, Secure: true}, viewcount.Valid)

	// Missing or impossible.
	f(uaChromeWin, viewcount.Hints{}, viewcount.BadHints)
	f(uaFirefoxWin, viewcount.Hints{}, viewcount.BadHints)
	zero := withUAData(desktop)
	zero.ScreenW = 0
	f(uaChromeWin, zero, viewcount.BadHints)
	zero = desktop
	zero.ScreenH = 0
	f(uaSafariMac, zero, viewcount.BadHints)
	huge := withUAData(desktop)
	huge.ScreenW = 16385
	f(uaChromeWin, huge, viewcount.BadHints)
	huge.ScreenW, huge.ScreenH = 1920, 65535
	f(uaChromeWin, huge, viewcount.BadHints)
	noLang := withUAData(desktop)
	noLang.Languages = 0
	f(uaChromeWin, noLang, viewcount.BadHints)
	f(uaChromeWin, desktop, viewcount.BadHints)              // Chrome 131 on https without userAgentData
	f(uaSamsung, phone, viewcount.BadHints)                  // likewise
	f(uaFirefoxWin, withUAData(desktop), viewcount.BadHints) // Chromium wearing Firefox's UA
	f(uaSafariIPhone, withUAData(phone), viewcount.BadHints) // or Safari's

	// The pixel has no hints: never judged by them.
	visitor++
	e := viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: uaChromeWin, Visitor: visitor, Source: viewcount.SourcePixel}
	if got := r.Judge(&e); got != viewcount.Valid {
		t.Errorf("pixel without hints: %s", got)
	}
}

func TestBadHintsConfig(t *testing.T) {
	r := newTestRules(t, Config{AllowMissingHints: true, MaxScreenSize: 4000})
	f := func(h viewcount.Hints, want viewcount.Reason) {
		t.Helper()
		e := viewcount.Event{Time: t0.Add(time.Duration(h.ScreenW) * time.Hour), Site: "example.com", Page: "/", UA: uaFirefoxWin,
			Source: viewcount.SourceBeacon, Hints: h}
		if got := r.Judge(&e); got != want {
			t.Errorf("hints %+v: %s, want %s", h, got, want)
		}
	}
	f(viewcount.Hints{}, viewcount.Valid)
	f(viewcount.Hints{Present: true, ScreenW: 4000, ScreenH: 2000, Languages: 1}, viewcount.Valid)
	f(viewcount.Hints{Present: true, ScreenW: 4001, ScreenH: 2000, Languages: 1}, viewcount.BadHints)
	f(viewcount.Hints{Present: true, ScreenW: 1, ScreenH: 2000, Languages: 0}, viewcount.BadHints)
}

// TestHeadlessScreen: the screen headless Chromium reports (measured:
// Chromium 156, --headless=new and the headless shell) is Headless
// whatever desktop browser its user agent names; the screens and windows
// real browsers report (Chromium and Firefox under Xvfb, a phone),
// headless Firefox's (its screen is a desktop's) and beacons without a
// window (older trackers, hidden pages) are not. A 0 × 0 window judges
// nothing: Chromium reads it, headful too, before a cross-site
// navigation's first frame (docs/invalid-traffic.md).
func TestHeadlessScreen(t *testing.T) {
	r := newTestRules(t, Config{})
	var visitor uint64
	win := func(sw, sh, ow, oh uint16, uaData bool) viewcount.Hints {
		return viewcount.Hints{Present: true, ScreenW: sw, ScreenH: sh, Languages: 2, TZ: true, Secure: true, UAData: uaData,
			Window: true, OuterW: ow, OuterH: oh}
	}
	f := func(ua string, h viewcount.Hints, want viewcount.Reason) {
		t.Helper()
		visitor++
		e := viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: ua, Visitor: visitor, Network: visitor,
			Source: viewcount.SourceBeacon, Hints: h}
		if got := r.Judge(&e); got != want {
			t.Errorf("%.40q %+v: %s, want %s", ua, h, got, want)
		}
	}
	// Headless Chromium as launched (a 780 × 580 window), before its first
	// frame (0 × 0), with --window-size=1366,768.
	f(uaChromeLinux, win(800, 600, 780, 580, true), viewcount.Headless)
	f(uaChromeLinux, win(800, 600, 0, 0, true), viewcount.Headless)
	f(uaChromeWin, win(800, 600, 1366, 768, true), viewcount.Headless)
	// Headful: Chromium and Firefox under Xvfb at 1920 × 1080, a small
	// window on a large screen, a window spanning two screens; Chromium
	// before a cross-site navigation's first frame, as trackers that did
	// not wait for one read it; headless Firefox (1366 × 768, screen and
	// window), which nothing in its hints tells from a person's.
	f(uaChromeLinux, win(1920, 1080, 945, 1060, true), viewcount.Valid)
	f(uaFirefoxLinux, win(1920, 1080, 1280, 972, false), viewcount.Valid)
	f(uaChromeWin, win(1920, 1080, 400, 300, true), viewcount.Valid)
	f(uaChromeWin, win(1920, 1080, 3840, 1080, true), viewcount.Valid)
	f(uaChromeLinux, win(1280, 800, 0, 0, true), viewcount.Valid)
	f(uaChromeWin, win(1920, 1080, 0, 0, true), viewcount.Valid)
	f(uaFirefoxLinux, win(1366, 768, 1366, 768, false), viewcount.Valid)
	f(uaSafariMac, win(1440, 900, 0, 0, false), viewcount.Valid)
	// Phones and web views; trackers that do not report a window.
	f(uaChromeAndroid, win(412, 915, 0, 0, true), viewcount.Valid)
	f(uaSafariIPhone, win(390, 844, 0, 0, false), viewcount.Valid)
	f(uaInstagramAndroid, win(412, 915, 0, 0, false), viewcount.Valid)
	old := win(1366, 768, 0, 0, false)
	old.Window = false
	f(uaFirefoxLinux, old, viewcount.Valid)
	// An older tracker from headless Chromium: its screen tells.
	old = win(800, 600, 0, 0, true)
	old.Window = false
	f(uaChromeLinux, old, viewcount.Headless)
}

// The window judges nothing: for any desktop beacon whose screen is not
// headless Chromium's, the verdict is the same whatever window it
// reports, 0 × 0 or none included.
func TestWindowJudgesNothing(t *testing.T) {
	r := newTestRules(t, Config{})
	rng := rand.New(rand.NewPCG(21, 2))
	uas := []string{uaChromeLinux, uaChromeWin, uaFirefoxLinux, uaSafariMac, uaChromeAndroid, uaSafariIPhone}
	for i := range 2000 {
		h := viewcount.Hints{Present: true, ScreenW: uint16(320 + rng.IntN(3500)), ScreenH: uint16(320 + rng.IntN(2200)),
			Languages: uint8(1 + rng.IntN(4)), TZ: true, Secure: rng.IntN(2) == 0, UAData: rng.IntN(2) == 0}
		if h.ScreenW == headlessScreenW && h.ScreenH == headlessScreenH {
			continue
		}
		ua := uas[rng.IntN(len(uas))]
		judge := func(w viewcount.Hints, visitor uint64) viewcount.Reason {
			e := viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: ua, Visitor: visitor, Network: visitor,
				Source: viewcount.SourceBeacon, Hints: w}
			return r.Judge(&e)
		}
		none := judge(h, uint64(4*i+1))
		for k, w := range []struct{ ow, oh uint16 }{{0, 0}, {uint16(rng.IntN(5000)), uint16(rng.IntN(3000))}, {h.ScreenW, h.ScreenH}} {
			hw := h
			hw.Window, hw.OuterW, hw.OuterH = true, w.ow, w.oh
			if got := judge(hw, uint64(4*i+2+k)); got != none {
				t.Fatalf("%.30q screen %d × %d: window %d × %d judged %s, without a window %s", ua, h.ScreenW, h.ScreenH, w.ow, w.oh, got, none)
			}
		}
	}
}
