package judge

import "github.com/viewcount/viewcount"

// Versions from which each engine sends a request header on every
// subresource request to a potentially trustworthy URL (https, or a
// loopback host), whatever the page does. Below them an engine is not
// judged on that header. The thresholds sit at or above the version that
// shipped it, so that rollouts behind flags and older point releases are
// not judged.
const (
	// Fetch Metadata (Sec-Fetch-Site/-Mode/-Dest): Chromium 76 sent some,
	// 80 all three; Firefox 90; Safari 16.4 (judged from 17, so the point
	// releases of 16 are not).
	chromiumFetchMeta = 80
	firefoxFetchMeta  = 90
	safariFetchMeta   = 17
	// Sec-CH-UA: on by default from Chromium 89; its version judged from
	// 90, as navigator.userAgentData is (chromiumUAData).
	chromiumClientHints = chromiumUAData
)

// headerMismatch reports whether a request lacks what the browser its user
// agent claims always sends with it, or carries what none sends (see
// viewcount.HeaderFlags; ingest decides the flags, this judges them). ua
// is the memoised verdict on e.UA.
//
// Only the families browserFamily is certain of are judged (Chromium
// browsers on desktop and Android that are not WebViews, Firefox, Safari):
// WebViews, in-app browsers and iOS browsers other than Safari set headers
// as their app decides, and UAs that claim no browser are other rules'
// business. Events ingest did not examine (published before the flags
// existed) are never judged.
//
// What a real browser always sends:
//   - Accept-Language, on every request (the three engines, any version;
//     Brave and the Tor Browser trim it to one language but send it);
//   - from the versions with Fetch Metadata on (chromiumFetchMeta …): for
//     the pixel an Accept naming image types, for the beacon an Accept at
//     all (fetch and sendBeacon add "*/*"); and in a secure context Fetch
//     Metadata that fits a subresource request of the endpoint's kind.
//     Older versions are not judged on these (what each sent varies).
//
// And what none sends: Sec-CH-UA from Firefox or Safari (neither engine
// has client hints; a Chromium wearing their user agent does); for
// Chrome, Edge and Opera from version 90, a Sec-CH-UA whose "Chromium"
// brand is not the user agent's Chrome version; a "Headless…" brand in
// Sec-CH-UA, which headless Chromium's old mode (chrome-headless-shell,
// Playwright's default headless browser) sends whatever user agent it is
// given.
//
// A missing Sec-CH-UA is not judged: a page's Permissions-Policy
// "ch-ua=()" (or one allowing only "self") withholds it from the stats
// host, which is a third party (Chromium 156 checked: no Sec-CH-UA on the
// pixel nor the beacon then).
//
// What is deliberately not judged, because real visitors vary there:
// plain-http requests (no Sec-* headers are sent at all; a TLS proxy that
// does not vouch for https with X-Forwarded-Proto makes every request look
// like that); Samsung Internet and other Chromium forks' client hints
// (their brand lists differ by version); Sec-CH-UA-Mobile/-Platform (a
// user agent switcher in a real Chrome leaves them true to the device);
// the exact Accept value (each engine and version has its own).
//
// A user agent the browser model does not recognise (uaInfo.weak) is
// judged on what every browser sends, whatever it is: Accept-Language,
// and no headless brand in Sec-CH-UA. Its weak signal and a request
// lacking those are two signals: the view is rejected. The same user agent
// with a browser's request counts. So is a bot's user agent (uaInfo.bot)
// that reaches this check because an operator allowed bot_ua for it: the
// allow restores the user agent's verdict, not the request's.
func headerMismatch(e *viewcount.Event, ua uaInfo) bool { return headerProblem(e, ua) != "" }

// headerProblem is what headerMismatch finds wrong with the request, ""
// when nothing: constant strings, so judging allocates nothing.
func headerProblem(e *viewcount.Event, ua uaInfo) string {
	f := e.Headers
	if !f.Has(viewcount.HeadersSeen) {
		return ""
	}
	if ua.weak || ua.bot {
		switch {
		case !f.Has(viewcount.HeaderAcceptLanguage):
			return "no Accept-Language, with a user agent the browser model does not recognise"
		case f.Has(viewcount.HeaderHeadlessBrand):
			return "a Headless brand in Sec-CH-UA, with a user agent the browser model does not recognise"
		}
	}
	if ua.family == famOther {
		return ""
	}
	if f.Has(viewcount.HeaderClientHints) {
		switch {
		case f.Has(viewcount.HeaderHeadlessBrand):
			return "a Headless brand in Sec-CH-UA"
		case ua.family != famChromium:
			return "Sec-CH-UA, which only Chromium browsers send, from a user agent of another engine"
		case sendsClientHints(ua) && !f.Has(viewcount.HeaderHintsAgree):
			return "Sec-CH-UA's Chromium brand names another version than the user agent"
		}
	}
	if !f.Has(viewcount.HeaderAcceptLanguage) {
		return "no Accept-Language, which every browser sends"
	}
	current := sendsFetchMeta(ua)
	if current && !f.Has(viewcount.HeaderAccept) {
		return "no Accept fitting the request (image types for the pixel), which this browser version always sends"
	}
	if current && f.Has(viewcount.HeaderSecure) && !f.Has(viewcount.HeaderFetchMeta|viewcount.HeaderFetchFits) {
		return "no fitting Sec-Fetch-Site/Mode/Dest on a secure request, which this browser version always sends"
	}
	return ""
}

func sendsFetchMeta(ua uaInfo) bool {
	switch ua.family {
	case famChromium:
		return ua.major >= chromiumFetchMeta
	case famFirefox:
		return ua.major >= firefoxFetchMeta
	case famSafari:
		return ua.major >= safariFetchMeta
	}
	return false
}

// sendsClientHints is true for the Chromium browsers whose Sec-CH-UA
// always carries a "Chromium" brand of their Chrome version beside their
// own (Chrome, Edge, Opera; Brave's user agent is Chrome's).
func sendsClientHints(ua uaInfo) bool {
	if ua.family != famChromium || ua.major < chromiumClientHints {
		return false
	}
	switch ua.dims.browser {
	case "Chrome", "Edge", "Opera":
		return true
	}
	return false
}
