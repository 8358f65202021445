package judge

import (
	"bytes"

	"github.com/viewcount/viewcount"
)

// uaFamily is the browser engine a user agent claims, decided only for UAs
// that look exactly like an unmodified current browser. Anything else
// (WebViews, in-app browsers, iOS browsers other than Safari, rarer
// Chromium forks) is famOther, and famOther is never judged by its hints:
// the hint rules must not flag a real browser, so they apply only where the
// engine is certain.
type uaFamily uint8

const (
	famOther    uaFamily = iota
	famChromium          // Chrome, Edge, Opera or Samsung Internet on desktop or Android, not a WebView
	famFirefox           // Firefox on desktop or Android (Gecko)
	famSafari            // Safari on macOS or iOS (WebKit)
)

// Product-token sets (lowercase, outside comments) of each family's UAs.
var (
	chromiumProducts = map[string]bool{"mozilla": true, "applewebkit": true, "chrome": true, "safari": true,
		"mobile": true, "edg": true, "edga": true, "opr": true, "samsungbrowser": true}
	firefoxProducts = map[string]bool{"mozilla": true, "gecko": true, "firefox": true}
	safariProducts  = map[string]bool{"mozilla": true, "applewebkit": true, "version": true, "mobile": true, "safari": true}
)

// browserFamily classifies a lowercased user agent and returns the major
// version it claims: Chrome's for Chromium, Firefox's for Firefox, the
// "Version/" token's for Safari.
func browserFamily(low []byte) (uaFamily, int) {
	rest, ok := bytes.CutPrefix(low, []byte("mozilla/5.0 ("))
	if !ok {
		return famOther, 0
	}
	i := bytes.IndexByte(rest, ')')
	if i < 0 {
		return famOther, 0
	}
	platform := rest[:i]
	rest = rest[i+1:]
	chromium, firefox, safari := true, true, true
	var hasChrome, hasFirefox, hasSafari, hasVersion bool
	major, firefoxMajor, safariMajor := 0, 0, 0
	for {
		var tok []byte
		if tok, rest = nextProduct(rest); tok == nil {
			break
		}
		if bytes.ContainsAny(tok, "()") {
			return famOther, 0
		}
		name, version, _ := bytes.Cut(tok, []byte("/"))
		n := string(name) // no allocation in map lookups and switches
		chromium = chromium && chromiumProducts[n]
		firefox = firefox && firefoxProducts[n]
		safari = safari && safariProducts[n]
		switch n {
		case "chrome":
			hasChrome, major = true, leadingInt(version)
		case "firefox":
			hasFirefox, firefoxMajor = true, leadingInt(version)
		case "safari":
			hasSafari = true
		case "version":
			hasVersion, safariMajor = true, leadingInt(version)
		}
	}
	switch {
	case chromium && hasChrome && !isWebView(platform):
		return famChromium, major
	case firefox && hasFirefox:
		return famFirefox, firefoxMajor
	case safari && hasSafari && hasVersion && applePlatform(platform):
		return famSafari, safariMajor
	}
	return famOther, 0
}

// isWebView reports an Android WebView ("...; wv)"): it may lack
// navigator.userAgentData whatever Chrome version it names.
func isWebView(platform []byte) bool {
	for f := range bytes.SplitSeq(platform, []byte(";")) {
		if string(bytes.TrimSpace(f)) == "wv" {
			return true
		}
	}
	return false
}

func applePlatform(platform []byte) bool {
	return bytes.HasPrefix(platform, []byte("macintosh")) || bytes.HasPrefix(platform, []byte("iphone")) ||
		bytes.HasPrefix(platform, []byte("ipad")) || bytes.HasPrefix(platform, []byte("ipod"))
}

func leadingInt(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > 1e6 {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// chromiumUAData is the first Chrome version that exposes
// navigator.userAgentData to pages in every Chromium browser we judge
// (Chrome 90; Edge, Opera and Samsung Internet follow Chromium's version).
const chromiumUAData = 90

// hintLimits are the BadHints thresholds.
type hintLimits struct {
	maxScreen   int  // a screen side larger than this, in CSS pixels, is impossible
	allowAbsent bool // beacon events without hints pass (old tracker scripts)
}

// badHints reports whether a beacon event's hints are missing or impossible
// for the browser its user agent claims. ua is the memoized verdict on
// e.UA. Pixel events carry no hints and are never judged here.
//
// Each check is one a real current browser cannot fail:
//   - no hints: vc.js always sends them (unless allowAbsent, for a rollout
//     while old copies of the script or old stream messages are around);
//   - a zero or absurd screen side (> maxScreen CSS pixels): every browser
//     that runs scripts has a screen; headless and scripted clients report 0;
//   - no languages: navigator.languages is never empty in a real browser
//     (old headless Chrome reported []);
//   - Chromium ≥ 90 in a secure context without navigator.userAgentData: the
//     API exists there in every such browser; scripts that fake a Chrome UA
//     from another engine or an HTTP client do not have it;
//   - Firefox or Safari with navigator.userAgentData: neither engine has
//     it, so a Chromium automation tool wearing their UA gives itself away.
func badHints(e *viewcount.Event, ua uaInfo, lim hintLimits) bool {
	return hintsProblem(e, ua, lim) != ""
}

// hintsProblem is what badHints finds wrong, "" when nothing.
func hintsProblem(e *viewcount.Event, ua uaInfo, lim hintLimits) string {
	h := &e.Hints
	if !h.Present {
		if lim.allowAbsent {
			return ""
		}
		return "the beacon carried no hints"
	}
	if h.ScreenW == 0 || h.ScreenH == 0 || int(h.ScreenW) > lim.maxScreen || int(h.ScreenH) > lim.maxScreen {
		return "a screen side of 0 or beyond the largest screen"
	}
	if h.Languages == 0 {
		return "no languages (navigator.languages empty)"
	}
	switch ua.family {
	case famChromium:
		if ua.major >= chromiumUAData && h.Secure && !h.UAData {
			return "no navigator.userAgentData on a secure page, which this Chromium version always has"
		}
	case famFirefox, famSafari:
		if h.UAData {
			return "navigator.userAgentData, which this engine does not have"
		}
	}
	return ""
}

// headlessScreen is the screen headless Chromium reports whatever its
// window (--headless=new and the headless shell: 800 × 600, its window
// 780 × 580 at 10,10, or what --window-size says); no desktop sold in the
// last twenty years has it.
const headlessScreenW, headlessScreenH = 800, 600

// headlessScreen reports a beacon from a desktop browser that no person
// looks at: a screen of exactly 800 × 600, headless Chromium's. It does
// not depend on the user agent, so a headless browser that borrowed a
// desktop browser's string is caught (TestBrowsersCounted: headless
// Chromium 156 with Chrome's user agent). Only desktop browsers of a
// known engine are judged: phones, tablets and web views have small
// screens of every size.
//
// The window's outer size (Hints.Window) is recorded but judges nothing.
// A 0 × 0 window was once taken for headless; measured on Chromium 156
// and Firefox ESR 153 (docs/invalid-traffic.md), it is no browser's
// window: every one reports its real size once the page has drawn a
// frame (headless Chromium 780 × 580, headless Firefox its 1366 × 768
// screen), and Chromium, headful as much as headless, reads 0 × 0 before
// that on a fifth to a third of cross-site navigations. Trackers before
// the one that waits for a frame sent those early readings, so the rule
// rejected people.
func headlessScreen(e *viewcount.Event, ua uaInfo) bool { return screenProblem(e, ua) != "" }

// screenProblem is what headlessScreen finds, "" when nothing.
func screenProblem(e *viewcount.Event, ua uaInfo) string {
	h := &e.Hints
	if !h.Present || ua.family == famOther || ua.dims.device != DeviceDesktop {
		return ""
	}
	if h.ScreenW == headlessScreenW && h.ScreenH == headlessScreenH {
		return "a screen of 800 × 600, headless Chromium's"
	}
	return ""
}
