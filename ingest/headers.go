package ingest

import (
	"net/http"
	"net/netip"
	"strings"

	"github.com/viewcount/viewcount"
)

// requestFlags records which of the headers a browser sends with a request
// of src's kind this request carried (see viewcount.HeaderFlags). The
// headers stay here; only the flags travel. ip is the client address as
// clientIP decided it: when it differs from the peer's, a trusted proxy
// forwarded the request, and only then is its X-Forwarded-Proto believed.
//
// It runs on every hit: map lookups of canonical keys and byte scans, no
// allocation (BenchmarkPixel).
func requestFlags(r *http.Request, src viewcount.Source, ip netip.Addr) viewcount.HeaderFlags {
	h := r.Header
	f := viewcount.HeadersSeen
	if secureRequest(r, ip) {
		f |= viewcount.HeaderSecure
	}
	site, mode, dest := first(h["Sec-Fetch-Site"]), first(h["Sec-Fetch-Mode"]), first(h["Sec-Fetch-Dest"])
	if site != "" && mode != "" && dest != "" {
		f |= viewcount.HeaderFetchMeta
		if fetchFits(src, site, mode, dest) {
			f |= viewcount.HeaderFetchFits
		}
	}
	if acceptFits(src, first(h["Accept"])) {
		f |= viewcount.HeaderAccept
	}
	if strings.TrimSpace(first(h["Accept-Language"])) != "" {
		f |= viewcount.HeaderAcceptLanguage
	}
	if ch := first(h["Sec-Ch-Ua"]); ch != "" {
		f |= viewcount.HeaderClientHints
		if hintsAgree(ch, r.UserAgent()) {
			f |= viewcount.HeaderHintsAgree
		}
		if strings.Contains(ch, `"Headless`) {
			f |= viewcount.HeaderHeadlessBrand
		}
	}
	return f
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// fetchFits reports whether the Sec-Fetch-* values are those of a
// subresource request of the endpoint's kind. The pixel is an <img>, new
// Image() or a CSS image (dest "image", mode "no-cors"); a page may also
// fetch() it (dest "empty"). The beacon is navigator.sendBeacon (mode
// "no-cors" for vc.js's text/plain body, "cors" for a JSON one) or fetch
// (mode "cors"), dest "empty". Site is "same-origin", "same-site" or
// "cross-site" for any subresource; "none" with dest "document" is
// someone opening the URL itself, which is no page view.
func fetchFits(src viewcount.Source, site, mode, dest string) bool {
	switch site {
	case "same-origin", "same-site", "cross-site":
	default:
		return false
	}
	if mode != "no-cors" && mode != "cors" {
		return false
	}
	switch src {
	case viewcount.SourcePixel:
		return dest == "image" || dest == "empty"
	case viewcount.SourceBeacon:
		return dest == "empty"
	}
	return false
}

// acceptFits reports whether Accept is one a browser sends for the
// endpoint. For an image every browser names image types (Chromium
// "image/jxl,image/avif,image/webp,…", Firefox "image/avif,image/webp,
// image/png,…", Safari "image/webp,image/avif,image/jxl,…"); HTTP clients
// send "*/*" or nothing. For the beacon it only has to be there: the Fetch
// standard makes sendBeacon and fetch send "*/*" unless the page sets
// another, which a site's own tracker may do.
func acceptFits(src viewcount.Source, accept string) bool {
	switch src {
	case viewcount.SourcePixel:
		return strings.Contains(accept, "image/")
	case viewcount.SourceBeacon:
		return strings.TrimSpace(accept) != ""
	}
	return false
}

// hintsAgree reports whether Sec-CH-UA does not contradict the user agent:
// its "Chromium" brand (every Chromium browser lists it beside its own and
// a GREASE brand) names the major version of the UA's "Chrome/" token. A
// brand list without "Chromium", or a UA without "Chrome/", contradicts
// nothing.
func hintsAgree(ch, ua string) bool {
	brand := brandVersion(ch, `"Chromium";v="`)
	if brand == "" {
		return true
	}
	i := strings.Index(ua, "Chrome/")
	if i < 0 {
		return true
	}
	v := ua[i+len("Chrome/"):]
	n := 0
	for n < len(v) && '0' <= v[n] && v[n] <= '9' {
		n++
	}
	return v[:n] == brand
}

// brandVersion is the version after prefix in a structured-header brand
// list (`"Chromium";v="131", "Not_A Brand";v="24"`), up to its quote.
func brandVersion(ch, prefix string) string {
	i := strings.Index(ch, prefix)
	if i < 0 {
		return ""
	}
	v := ch[i+len(prefix):]
	j := strings.IndexByte(v, '"')
	if j < 0 {
		return ""
	}
	return v[:j]
}

// secureRequest reports whether the browser sent the request to a
// potentially trustworthy URL: over TLS, through a trusted proxy that says
// it was https, or straight to a loopback host. Only there do browsers send
// Sec-Fetch-* and Sec-CH-UA, so the header rule judges their absence only
// for such requests. A TLS-terminating proxy that is not trusted, or does
// not say, makes requests look insecure: then they are simply not judged.
//
// The Host header is believed only from a client that is not a proxy: a
// reverse proxy's upstream is often "127.0.0.1:8080" whatever the browser
// asked for, so a request showing any forwarding header is judged by
// X-Forwarded-Proto alone.
func secureRequest(r *http.Request, ip netip.Addr) bool {
	if r.TLS != nil {
		return true
	}
	h := r.Header
	if forwarded(r, ip) {
		return strings.EqualFold(first(h["X-Forwarded-Proto"]), "https")
	}
	if len(h["X-Forwarded-For"]) > 0 || len(h["X-Forwarded-Proto"]) > 0 || len(h["X-Real-Ip"]) > 0 ||
		len(h["Forwarded"]) > 0 || len(h["Via"]) > 0 {
		return false
	}
	return loopbackHost(r.Host)
}

// forwarded reports whether ip (the client address gin decided) came from
// a trusted proxy's X-Forwarded-For rather than from the connection.
func forwarded(r *http.Request, ip netip.Addr) bool {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ip.IsValid() && peer.Addr().Unmap() != ip.Unmap()
}

// loopbackHost reports whether a Host header names the local machine:
// "localhost", a "*.localhost" name or a loopback address, with or
// without a port. Browsers treat those as secure contexts over plain http.
func loopbackHost(host string) bool {
	if strings.HasPrefix(host, "[") { // [::1]:8080
		if i := strings.IndexByte(host, ']'); i > 0 {
			a, err := netip.ParseAddr(host[1:i])
			return err == nil && a.IsLoopback()
		}
		return false
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	if dottedDecimal(host) { // parsed only then: a failed parse allocates its error
		a, err := netip.ParseAddr(host)
		return err == nil && a.IsLoopback()
	}
	host = strings.TrimSuffix(host, ".")
	return strings.EqualFold(host, "localhost") || hasSuffixFold(host, ".localhost")
}

func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

func dottedDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return s != ""
}
