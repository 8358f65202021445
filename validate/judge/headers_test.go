package judge

import (
	"testing"

	"github.com/viewcount/viewcount"
)

// Header flags as ingest records them for real clients' requests: each
// name is a header set in ingest/headers_test.go, and TestRequestFlags
// there checks that the set gives exactly these flags. The browsers' sets
// were captured from headful Chromium 156 and Firefox ESR 153 (and
// headless Chromium, which sends the same as headful); the scripts' are
// curl, Python's urllib and requests, and Go's net/http, each with a
// Chrome user agent.
const (
	hSeen     = viewcount.HeadersSeen
	hSecure   = viewcount.HeaderSecure
	hFetch    = viewcount.HeaderFetchMeta | viewcount.HeaderFetchFits
	hAccept   = viewcount.HeaderAccept | viewcount.HeaderAcceptLanguage
	hHints    = viewcount.HeaderClientHints | viewcount.HeaderHintsAgree
	hChromium = hSeen | hSecure | hFetch | hAccept | hHints // chromiumPixel, chromiumBeacon
	hFirefox  = hSeen | hSecure | hFetch | hAccept          // firefoxPixel, firefoxBeacon, safariPixel
	hCurl     = hSeen | hSecure                             // curlChrome (pixel), urllibChrome
	hCurlPost = hSeen | hSecure | viewcount.HeaderAccept    // curlChrome (beacon)
	hRequests = hSeen | viewcount.HeaderAccept              // requestsChrom, plain http
	hGo       = hSeen                                       // goHTTPChrome, plain http
)

const (
	uaChromium156 = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	uaFirefox153  = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0"
	uaSafari17    = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15"
	uaSafari16    = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Safari/605.1.15"
	uaChrome75    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3770.142 Safari/537.36"
	uaFirefox85   = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:85.0) Gecko/20100101 Firefox/85.0"
)

func TestHeaderMismatch(t *testing.T) {
	r := newTestRules(t, Config{})
	var visitor uint64
	judge := func(r *Rules, ua string, src viewcount.Source, flags viewcount.HeaderFlags) viewcount.Reason {
		visitor++
		e := viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: ua, Visitor: visitor, Network: visitor,
			Source: src, Headers: flags}
		if src == viewcount.SourceBeacon {
			e.Hints = realHints(ua) // hints are BadHints' business, not this test's
		}
		return r.Judge(&e)
	}
	f := func(ua string, src viewcount.Source, flags viewcount.HeaderFlags, want viewcount.Reason) {
		t.Helper()
		if got := judge(r, ua, src, flags); got != want {
			t.Errorf("%s %#x from %q: %s, want %s", src, flags, ua, got, want)
		}
	}
	pixel, beacon := viewcount.SourcePixel, viewcount.SourceBeacon
	valid, mismatch := viewcount.Valid, viewcount.HeaderMismatch

	// Real browsers, as captured.
	f(uaChromium156, pixel, hChromium, valid)
	f(uaChromium156, beacon, hChromium, valid)
	f(uaFirefox153, pixel, hFirefox, valid)
	f(uaFirefox153, beacon, hFirefox, valid)
	f(uaSafari17, pixel, hFirefox, valid)
	for _, ua := range []string{uaChromeWin, uaChromeAndroid, uaEdgeWin, uaOpera, uaSamsung} {
		f(ua, pixel, hChromium, valid)
	}
	// Where browsers legitimately send less: plain http (no Sec-* at all),
	// a page whose Permissions-Policy withholds Sec-CH-UA, versions from
	// before Fetch Metadata.
	f(uaChromium156, pixel, hSeen|hAccept, valid)
	f(uaChromium156, pixel, hSeen|hSecure|hFetch|hAccept, valid)
	f(uaChrome75, pixel, hSeen|hSecure|hAccept, valid)
	f(uaFirefox85, pixel, hSeen|hSecure|hAccept, valid)
	f(uaSafari16, pixel, hSeen|hSecure|hAccept, valid)
	f(uaChrome75, pixel, hSeen|hSecure|viewcount.HeaderAcceptLanguage, valid) // its image Accept is not judged
	f(uaChrome75, pixel, hSeen|hSecure|viewcount.HeaderAccept, mismatch)      // Accept-Language is, in every version
	// Events ingest did not examine (from before the flags) are not judged.
	f(uaChromium156, pixel, 0, valid)
	// Not a browser family judged here: WebViews and in-app browsers set
	// headers as their app decides; iOS browsers other than Safari; forks.
	for _, ua := range []string{uaInstagramAndroid, uaFacebookIOS, uaChromeIOS, uaEdgeIOS, uaFirefoxIOS, uaYandex} {
		f(ua, pixel, hGo, valid)
	}

	// Scripts with a browser's user agent.
	f(uaChromium156, pixel, hCurl, mismatch)
	f(uaChromium156, beacon, hCurlPost, mismatch)
	f(uaFirefox153, pixel, hCurl, mismatch) // urllib
	f(uaChromium156, beacon, hRequests, mismatch)
	f(uaSafari17, pixel, hGo, mismatch)
	// A script that copies Accept and Accept-Language but not Fetch
	// Metadata passes over plain http (nothing to judge) and fails over
	// https.
	f(uaChromium156, pixel, hSeen|hAccept, valid)
	f(uaChromium156, pixel, hSeen|hSecure|hAccept|hHints, mismatch)
	f(uaFirefox153, beacon, hSeen|hSecure|hAccept, mismatch)
	// Fetch Metadata of another kind of request: the pixel URL opened as a
	// page.
	f(uaChromium156, pixel, hSeen|hSecure|viewcount.HeaderFetchMeta|hAccept|hHints, mismatch)
	// An image Accept is what an <img> sends; no Accept-Language, never.
	f(uaChromium156, pixel, hChromium&^viewcount.HeaderAccept, mismatch)
	f(uaFirefox153, beacon, hFirefox&^viewcount.HeaderAcceptLanguage, mismatch)

	// Client hints that give a Chromium away: on Firefox or Safari, of
	// another version than the user agent's, or a headless brand.
	f(uaFirefox153, pixel, hFirefox|hHints, mismatch)
	f(uaSafari17, pixel, hFirefox|viewcount.HeaderClientHints, mismatch)
	f(uaChromium156, pixel, hChromium&^viewcount.HeaderHintsAgree, mismatch)
	f(uaSamsung, pixel, hChromium&^viewcount.HeaderHintsAgree, valid) // a fork's brands are not judged
	f(uaChromium156, pixel, hChromium|viewcount.HeaderHeadlessBrand, mismatch)
	f(uaChromium156, pixel, hSeen|hAccept|hHints|viewcount.HeaderHeadlessBrand, mismatch)

	// Other rules come first: a bot user agent is BotUA whatever it sent.
	f(uaGooglebot, pixel, hGo, viewcount.BotUA)

	// IgnoreHeaders turns the check off.
	off := newTestRules(t, Config{IgnoreHeaders: true})
	if got := judge(off, uaChromium156, pixel, hCurl); got != valid {
		t.Errorf("IgnoreHeaders: %s, want valid", got)
	}
}
