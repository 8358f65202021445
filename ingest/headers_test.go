package ingest

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// Header sets as real clients send them to the pixel and the beacon. The
// browsers' were captured, in the setup TestBrowsersCounted (cmd/viewcount) runs, from a page
// on http://localhost to an endpoint on http://127.0.0.1 (both loopback, so
// the browsers treat them as secure): headful Chromium 156 and Firefox ESR
// 153 under Xvfb, and headless Chromium with a browser UA, which sends
// exactly what headful Chromium sends. Safari 17's is from its documented
// Accept and Fetch Metadata (Safari sends no Sec-CH-UA). The scripts' are
// what each library sends by itself with a user agent set.
const (
	chromium156UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"
	firefox153UA  = "Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0"
	safari17UA    = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15"
)

var (
	chromiumPixel = map[string]string{
		"Accept":             "image/jxl,image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
		"Accept-Encoding":    "gzip, deflate, br, zstd",
		"Accept-Language":    "en-US,en;q=0.9",
		"Sec-Ch-Ua":          `"Not:A-Brand";v="8", "Chromium";v="156"`,
		"Sec-Ch-Ua-Mobile":   "?0",
		"Sec-Ch-Ua-Platform": `"Linux"`,
		"Sec-Fetch-Dest":     "image",
		"Sec-Fetch-Mode":     "no-cors",
		"Sec-Fetch-Site":     "cross-site",
		"User-Agent":         chromium156UA,
	}
	chromiumBeacon = map[string]string{
		"Accept":             "*/*",
		"Accept-Encoding":    "gzip, deflate, br, zstd",
		"Accept-Language":    "en-US,en;q=0.9",
		"Content-Type":       "text/plain;charset=UTF-8",
		"Origin":             "http://localhost:18080",
		"Sec-Ch-Ua":          `"Not:A-Brand";v="8", "Chromium";v="156"`,
		"Sec-Ch-Ua-Mobile":   "?0",
		"Sec-Ch-Ua-Platform": `"Linux"`,
		"Sec-Fetch-Dest":     "empty",
		"Sec-Fetch-Mode":     "no-cors",
		"Sec-Fetch-Site":     "cross-site",
		"User-Agent":         chromium156UA,
	}
	firefoxPixel = map[string]string{
		"Accept":          "image/avif,image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
		"Accept-Encoding": "gzip, deflate, br, zstd",
		"Accept-Language": "en-US,en;q=0.9",
		"Priority":        "u=4, i",
		"Sec-Fetch-Dest":  "image",
		"Sec-Fetch-Mode":  "no-cors",
		"Sec-Fetch-Site":  "cross-site",
		"User-Agent":      firefox153UA,
	}
	firefoxBeacon = map[string]string{
		"Accept":          "*/*",
		"Accept-Encoding": "gzip, deflate, br, zstd",
		"Accept-Language": "en-US,en;q=0.9",
		"Content-Type":    "text/plain;charset=UTF-8",
		"Priority":        "u=6",
		"Sec-Fetch-Dest":  "empty",
		"Sec-Fetch-Mode":  "no-cors",
		"Sec-Fetch-Site":  "cross-site",
		"User-Agent":      firefox153UA,
	}
	safariPixel = map[string]string{
		"Accept":          "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
		"Accept-Language": "en-GB,en;q=0.9",
		"Sec-Fetch-Dest":  "image",
		"Sec-Fetch-Mode":  "no-cors",
		"Sec-Fetch-Site":  "cross-site",
		"User-Agent":      safari17UA,
	}
	curlChrome    = map[string]string{"Accept": "*/*", "User-Agent": chromium156UA}
	urllibChrome  = map[string]string{"Accept-Encoding": "identity", "Connection": "close", "User-Agent": chromium156UA}
	goHTTPChrome  = map[string]string{"Accept-Encoding": "gzip", "User-Agent": chromium156UA}
	requestsChrom = map[string]string{"Accept": "*/*", "Accept-Encoding": "gzip, deflate", "Connection": "keep-alive", "User-Agent": chromium156UA}
)

// The flags of a full browser request, and the ones it sets as parts.
const (
	hs         = viewcount.HeadersSeen
	fetchOK    = viewcount.HeaderFetchMeta | viewcount.HeaderFetchFits
	acceptBoth = viewcount.HeaderAccept | viewcount.HeaderAcceptLanguage
	hintsOK    = viewcount.HeaderClientHints | viewcount.HeaderHintsAgree
	secure     = viewcount.HeaderSecure
)

func flagsOf(src viewcount.Source, host string, hdr map[string]string) viewcount.HeaderFlags {
	path := "/p.gif?site=example.com&page=/"
	method := http.MethodGet
	if src == viewcount.SourceBeacon {
		path, method = "/v1/events", http.MethodPost
	}
	req := httptest.NewRequest(method, "http://"+host+path, nil)
	req.RemoteAddr = testIP + ":40000"
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return requestFlags(req, src, netip.MustParseAddr(testIP))
}

func TestRequestFlags(t *testing.T) {
	f := func(name string, src viewcount.Source, host string, hdr map[string]string, want viewcount.HeaderFlags) {
		t.Helper()
		if got := flagsOf(src, host, hdr); got != want {
			t.Errorf("%s: flags %#x, want %#x", name, got, want)
		}
	}
	pixel, beacon := viewcount.SourcePixel, viewcount.SourceBeacon
	f("chromium pixel", pixel, "127.0.0.1:8080", chromiumPixel, hs|secure|fetchOK|acceptBoth|hintsOK)
	f("chromium beacon", beacon, "127.0.0.1:8080", chromiumBeacon, hs|secure|fetchOK|acceptBoth|hintsOK)
	f("firefox pixel", pixel, "localhost:8080", firefoxPixel, hs|secure|fetchOK|acceptBoth)
	f("firefox beacon", beacon, "[::1]:8080", firefoxBeacon, hs|secure|fetchOK|acceptBoth)
	f("safari pixel", pixel, "stats.localhost", safariPixel, hs|secure|fetchOK|acceptBoth)
	// Over plain http to a public name the browser sends no Sec-* headers,
	// and ingest does not claim a secure context.
	f("chromium pixel, insecure", pixel, "stats.example.com",
		with(chromiumPixel, "Sec-Ch-Ua", "", "Sec-Fetch-Site", "", "Sec-Fetch-Mode", "", "Sec-Fetch-Dest", ""), hs|acceptBoth)
	// The endpoint decides what fits: a pixel fetch()ed by a script still
	// fits, but without an image Accept; an image request to the beacon
	// does not.
	f("pixel by fetch()", pixel, "127.0.0.1", chromiumBeacon, hs|secure|fetchOK|viewcount.HeaderAcceptLanguage|hintsOK)
	f("image request to the beacon", beacon, "127.0.0.1", chromiumPixel, hs|secure|viewcount.HeaderFetchMeta|acceptBoth|hintsOK)
	f("pixel opened as a page", pixel, "127.0.0.1", with(chromiumPixel, "Sec-Fetch-Site", "none", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Dest", "document"),
		hs|secure|viewcount.HeaderFetchMeta|acceptBoth|hintsOK)
	f("fetch() beacon", beacon, "127.0.0.1", with(chromiumBeacon, "Sec-Fetch-Mode", "cors"), hs|secure|fetchOK|acceptBoth|hintsOK)
	// Client hints that contradict the UA, or name a headless brand.
	f("hints of another version", pixel, "127.0.0.1", with(chromiumPixel, "Sec-Ch-Ua", `"Chromium";v="120", "Not?A_Brand";v="24"`),
		hs|secure|fetchOK|acceptBoth|viewcount.HeaderClientHints)
	f("headless shell brand", pixel, "127.0.0.1", with(chromiumPixel, "Sec-Ch-Ua", `"Not/A)Brand";v="8", "Chromium";v="156", "HeadlessChrome";v="156"`),
		hs|secure|fetchOK|acceptBoth|hintsOK|viewcount.HeaderHeadlessBrand)
	// Scripts with a browser user agent.
	f("curl", pixel, "127.0.0.1", curlChrome, hs|secure)
	f("curl beacon", beacon, "127.0.0.1", curlChrome, hs|secure|viewcount.HeaderAccept)
	f("python urllib", pixel, "127.0.0.1", urllibChrome, hs|secure)
	f("python requests", beacon, "stats.example.com", requestsChrom, hs|viewcount.HeaderAccept)
	f("go net/http", pixel, "stats.example.com", goHTTPChrome, hs)
}

// with returns a copy of hdr with the given keys set, or deleted when "".
func with(hdr map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(hdr))
	for k, v := range hdr {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

func TestSecureRequest(t *testing.T) {
	client := netip.MustParseAddr(testIP)
	f := func(name string, want bool, prep func(r *http.Request) netip.Addr) {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "http://stats.example.com/p.gif", nil)
		r.RemoteAddr = testIP + ":40000"
		if got := secureRequest(r, prep(r)); got != want {
			t.Errorf("%s: secure = %v, want %v", name, got, want)
		}
	}
	f("plain http", false, func(*http.Request) netip.Addr { return client })
	f("tls", true, func(r *http.Request) netip.Addr { r.TLS = &tls.ConnectionState{}; return client })
	// X-Forwarded-Proto counts only when a trusted proxy forwarded the
	// request, which shows as a client address other than the peer's.
	f("proxy says https", true, func(r *http.Request) netip.Addr {
		r.RemoteAddr, r.Header["X-Forwarded-Proto"] = "10.0.0.2:5555", []string{"https"}
		return client
	})
	f("proxy says http", false, func(r *http.Request) netip.Addr {
		r.RemoteAddr, r.Header["X-Forwarded-Proto"] = "10.0.0.2:5555", []string{"http"}
		return client
	})
	f("client says https", false, func(r *http.Request) netip.Addr {
		r.Header["X-Forwarded-Proto"] = []string{"https"}
		return client
	})
	// A proxy's upstream Host is not what the browser asked for.
	f("proxied to loopback", false, func(r *http.Request) netip.Addr {
		r.Host, r.RemoteAddr, r.Header["X-Forwarded-For"] = "127.0.0.1:8080", "127.0.0.1:5555", []string{testIP}
		return client
	})
	f("untrusted proxy to loopback", false, func(r *http.Request) netip.Addr {
		r.Host, r.RemoteAddr, r.Header["Via"] = "localhost:8080", "127.0.0.1:5555", []string{"1.1 proxy"}
		return netip.MustParseAddr("127.0.0.1")
	})
	f("browser on loopback", true, func(r *http.Request) netip.Addr {
		r.Host, r.RemoteAddr = "localhost:8080", "127.0.0.1:5555"
		return netip.MustParseAddr("127.0.0.1")
	})
	for host, want := range map[string]bool{"localhost": true, "LOCALHOST:80": true, "a.localhost.": true, "127.0.0.1": true,
		"127.9.9.9:1": true, "[::1]:8080": true, "[::1]": true, "[::2]": false, "[::1": false, "10.0.0.1": false,
		"localhost.example": false, "notlocalhost": false, "": false, "1.2.3": false} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestHintsAgree(t *testing.T) {
	f := func(ch, ua string, want bool) {
		t.Helper()
		if got := hintsAgree(ch, ua); got != want {
			t.Errorf("hintsAgree(%q, %q) = %v, want %v", ch, ua, got, want)
		}
	}
	edge := "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0"
	f(`"Microsoft Edge";v="131", "Chromium";v="131", "Not_A Brand";v="24"`, edge, true)
	f(`"Chromium";v="130", "Microsoft Edge";v="130"`, edge, false)
	f(`"Chromium";v="131"`, strings.Replace(edge, "Chrome/131", "Chrome/1310", 1), false)
	f(`"Brave";v="131"`, edge, true)        // no Chromium brand: nothing to compare
	f(`"Chromium";v="131"`, "curl/8", true) // no Chrome token: nothing to compare
	f(`"Chromium";v="131`, edge, true)      // unterminated: no version read
}

// BenchmarkRequestFlags is the per-hit cost of the header flags on
// Chromium's pixel request, the longest header set.
func BenchmarkRequestFlags(b *testing.B) {
	req := httptest.NewRequest(http.MethodGet, "http://stats.example.com/p.gif", nil)
	req.RemoteAddr = testIP + ":40000"
	req.Header["X-Forwarded-Proto"] = []string{"https"}
	for k, v := range chromiumPixel {
		req.Header.Set(k, v)
	}
	ip := netip.MustParseAddr("198.51.100.1")
	b.ReportAllocs()
	for b.Loop() {
		if requestFlags(req, viewcount.SourcePixel, ip) != hs|secure|fetchOK|acceptBoth|hintsOK {
			b.Fatal("flags")
		}
	}
}

// The flags travel on the published event; the headers do not.
func TestHeaderFlagsPublished(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/p.gif?site=example.com&page=/", nil)
	for k, v := range chromiumPixel {
		req.Header.Set(k, v)
	}
	checkGIF(t, srv.do(req), http.StatusOK)
	req = httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/v1/events", strings.NewReader(`{"site":"example.com","page":"/"}`))
	for k, v := range firefoxBeacon {
		req.Header.Set(k, v)
	}
	if w := srv.do(req); w.Code != http.StatusAccepted {
		t.Fatalf("beacon: %d %s", w.Code, w.Body)
	}
	evs := pub.events()
	if len(evs) != 2 {
		t.Fatalf("%d events", len(evs))
	}
	if got, want := evs[0].Headers, hs|secure|fetchOK|acceptBoth|hintsOK; got != want {
		t.Errorf("pixel: flags %#x, want %#x", got, want)
	}
	if got, want := evs[1].Headers, hs|secure|fetchOK|acceptBoth; got != want {
		t.Errorf("beacon: flags %#x, want %#x", got, want)
	}
}
