package loadgen

import (
	"net/http"
	"strings"
)

// A hit whose user agent names a browser carries the headers a browser
// sends with the tracker's requests (Accept, Accept-Language, Fetch
// Metadata): the server's header_mismatch rule rejects a browser UA
// without them, as it rejects scripts that borrow one. Loadgen's traffic
// comes through X-Forwarded-For from plain http, which the server does not
// count as a secure context, so Sec-CH-UA (sent only there) is left out.
// Each set is Chromium's, as headful Chromium 156 sends it
// (ingest/headers_test.go), whatever browser the UA names: the rule judges
// presence and fit, not each engine's exact Accept.
var (
	pixelHeaders = [][2]string{
		{"Accept", "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"},
		{"Accept-Language", "en-US,en;q=0.9"},
		{"Sec-Fetch-Dest", "image"},
		{"Sec-Fetch-Mode", "no-cors"},
		{"Sec-Fetch-Site", "cross-site"},
	}
	beaconHeaders = [][2]string{ // navigator.sendBeacon with a text/plain body
		{"Accept", "*/*"},
		{"Accept-Language", "en-US,en;q=0.9"},
		{"Sec-Fetch-Dest", "empty"},
		{"Sec-Fetch-Mode", "no-cors"},
		{"Sec-Fetch-Site", "cross-site"},
	}
)

// browserHeaders returns the headers a request of the given kind carries
// from user agent ua: a browser's set when ua claims to be one
// ("Mozilla/…"), none otherwise (curl, bots and the like send their own).
func browserHeaders(ua string, beacon bool) [][2]string {
	switch {
	case !strings.HasPrefix(ua, "Mozilla/"):
		return nil
	case beacon:
		return beaconHeaders
	}
	return pixelHeaders
}

// SetBrowserHeaders sets on h what a browser with user agent ua sends
// with a pixel request, or with a beacon (see browserHeaders); for tests
// that send hits as a browser would.
func SetBrowserHeaders(h http.Header, ua string, beacon bool) {
	for _, kv := range browserHeaders(ua, beacon) {
		h.Set(kv[0], kv[1])
	}
}

func appendHeaders(b []byte, hdrs [][2]string) []byte {
	for _, kv := range hdrs {
		b = append(b, kv[0]...)
		b = append(b, ": "...)
		b = append(b, kv[1]...)
		b = append(b, "\r\n"...)
	}
	return b
}
