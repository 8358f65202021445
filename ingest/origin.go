package ingest

import (
	"net/http"
	"strings"
)

// MaxOriginLen caps Event.Origin: DNS's limit on a name, which is longer
// than any address literal.
const MaxOriginLen = 253

// pageOrigin is the host of the page a request was sent from, as the
// browser told it (see viewcount.Event.Origin): the Origin header's, else
// the Referer's; "" when neither names a host. Browsers set both, so a
// page's script cannot: a tag stuffed into another site's page reports
// that page. Origin "null" (a sandboxed frame, a file: page, some
// browsers under Referrer-Policy: no-referrer) names no host, and nor
// does a Referer a policy stripped: the tracker's own report (trackerHost)
// may then say. It allocates only for a host with upper-case letters.
func pageOrigin(h http.Header) string {
	if o := first(h["Origin"]); o != "" && o != "null" {
		if host := hostOfURL(o); host != "" {
			return host
		}
	}
	return hostOfURL(first(h["Referer"]))
}

// hostOfURL is the host of an absolute http(s) URL, in Event.Origin's form
// (lower case, no port, no brackets, no trailing dot); "" for anything
// else: another scheme (a file: or extension page's referrer), no host,
// a host outside the allow-list of name and address characters.
func hostOfURL(u string) string {
	rest, ok := cutPrefixFold(u, "https://")
	if !ok {
		if rest, ok = cutPrefixFold(u, "http://"); !ok {
			return ""
		}
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 { // userinfo
		rest = rest[i+1:]
	}
	if strings.HasPrefix(rest, "[") { // [::1]:8080
		i := strings.IndexByte(rest, ']')
		if i < 0 || i+1 < len(rest) && rest[i+1] != ':' {
			return ""
		}
		return normaliseOrigin(rest[1:i], true)
	}
	if i := strings.LastIndexByte(rest, ':'); i >= 0 {
		rest = rest[:i]
	}
	return normaliseOrigin(rest, false)
}

// trackerHost is the page host a tracker reported (vc.js sends
// location.hostname), in Event.Origin's form, or "". Only the Origin and
// Referer headers are the browser's word; this is the page's own, used
// when they say nothing.
func trackerHost(h string) string {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		return normaliseOrigin(h[1:len(h)-1], true)
	}
	return normaliseOrigin(h, false)
}

// normaliseOrigin lower-cases a host and drops a trailing dot, or returns
// "" for one that is empty, too long, has an empty label, or holds a byte no host name or
// address literal has (an allow-list: letters, digits, '-', '.', '_'; for
// an IPv6 literal hex digits, ':' and '.').
func normaliseOrigin(h string, v6 bool) string {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > MaxOriginLen || !v6 && (h[0] == '.' || h[len(h)-1] == '.' || strings.Contains(h, "..")) {
		return ""
	}
	upper := false
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case v6:
			switch {
			case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c == ':', c == '.':
			case c >= 'A' && c <= 'F':
				upper = true
			default:
				return ""
			}
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.', c == '_':
		case c >= 'A' && c <= 'Z':
			upper = true
		default:
			return ""
		}
	}
	if upper {
		h = strings.ToLower(h)
	}
	return h
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}
