package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/viewcount/viewcount/ingest"
)

// Requests are assembled by appending into buffers a worker reuses, so
// building one costs no more than copying its bytes: the load generator's
// CPU per request must stay small beside the server's on a shared machine
// (BenchmarkPixelRequestBuild; docs/benchmarks/method.md, "loadgen"). The
// same appenders build the *http.Request of Hit.Request and BatchRequest,
// so the traffic test and the hot loop send the same bytes.

// Content types, as vc.js (navigator.sendBeacon) and batch clients send them.
const (
	beaconContentType = "text/plain;charset=UTF-8"
	batchContentType  = "application/json"
	countUserAgent    = "viewcount-loadgen"
)

func (h *Hit) beaconEvent() ingest.BeaconEvent {
	return ingest.BeaconEvent{Site: h.Site, Page: h.Page, Referrer: h.Referrer, ID: h.ID, Webdriver: h.Webdriver, Hints: h.Hints}
}

// Request builds the HTTP request of the hit against the server at base
// ("http://host:port"): GET /p.gif?site&page&ref&id[&wd=1] or POST
// /v1/events with one JSON object (text/plain, as navigator.sendBeacon sends
// it). The hit's IP goes into X-Forwarded-For, so the server must trust the
// load generator's address as a proxy (--trusted-proxies); its id is always
// set, so verdicts can be joined back to the hit.
func (h Hit) Request(base string) (*http.Request, error) {
	base = strings.TrimRight(base, "/")
	if err := h.checkHeaders(); err != nil {
		return nil, err
	}
	var req *http.Request
	var err error
	if h.Beacon {
		body := appendBeaconEvent(nil, &h)
		req, err = http.NewRequest(http.MethodPost, base+"/v1/events", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", beaconContentType)
		}
	} else {
		req, err = http.NewRequest(http.MethodGet, base+string(appendPixelTarget(nil, &h)), nil)
	}
	if err != nil {
		return nil, fmt.Errorf("loadgen: request for hit %s: %w", h.ID, err)
	}
	h.setHeaders(req)
	return req, nil
}

func (h *Hit) setHeaders(req *http.Request) {
	// An empty User-Agent header makes net/http send none at all, rather
	// than its own "Go-http-client/1.1".
	req.Header.Set("User-Agent", h.UA)
	if h.IP != "" {
		req.Header.Set("X-Forwarded-For", h.IP)
	}
	SetBrowserHeaders(req.Header, h.UA, h.Beacon)
}

var errEmptyBatch = errors.New("loadgen: empty batch")

// checkHeaders refuses header values that would break the request framing
// (a CR or LF would inject headers): net/http checks this for us, the
// request writer must do it itself.
func (h *Hit) checkHeaders() error {
	if !validHeaderValue(h.UA) || !validHeaderValue(h.IP) {
		return fmt.Errorf("loadgen: hit %s: control character in User-Agent or IP", h.ID)
	}
	return nil
}

func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// requestWriter assembles the HTTP/1.1 requests of one worker into a
// buffer it reuses: each method returns the whole request, valid until the
// next call.
type requestWriter struct {
	host   string // Host header
	prefix string // the server URL's path, escaped, without a trailing slash
	buf    []byte // the request
	body   []byte // a POST body, before it is copied after the head
}

func newRequestWriter(host, prefix string) *requestWriter {
	return &requestWriter{host: host, prefix: strings.TrimRight(prefix, "/"), buf: make([]byte, 0, 1024)}
}

// pixel is GET /p.gif for the hit.
func (w *requestWriter) pixel(h *Hit) ([]byte, error) {
	if err := h.checkHeaders(); err != nil {
		return nil, err
	}
	b := append(w.buf[:0], "GET "...)
	b = append(b, w.prefix...)
	b = appendPixelTarget(b, h)
	b = w.appendHead(b, h.UA, h.IP)
	b = appendHeaders(b, browserHeaders(h.UA, false))
	w.buf = append(b, '\r', '\n')
	return w.buf, nil
}

// beacon is POST /v1/events with the hit as one object.
func (w *requestWriter) beacon(h *Hit) ([]byte, error) {
	if err := h.checkHeaders(); err != nil {
		return nil, err
	}
	w.body = appendBeaconEvent(w.body[:0], h)
	return w.post(h, beaconContentType), nil
}

// batch is POST /v1/events with every hit in an array, from the first
// hit's client (see BatchRequest).
func (w *requestWriter) batch(hits []Hit) ([]byte, error) {
	if len(hits) == 0 {
		return nil, errEmptyBatch
	}
	if err := hits[0].checkHeaders(); err != nil {
		return nil, err
	}
	w.body = appendBatchBody(w.body[:0], hits)
	return w.post(&hits[0], batchContentType), nil
}

// count is GET /v1/sites/{site}/count?page=P, the public count a page
// shows, read as a browser would: no X-Forwarded-For.
func (w *requestWriter) count(site, page string) []byte {
	b := append(w.buf[:0], "GET "...)
	b = append(b, w.prefix...)
	b = append(b, "/v1/sites/"...)
	b = appendEscaped(b, site, false)
	b = append(b, "/count?page="...)
	b = appendEscaped(b, page, true)
	b = w.appendHead(b, countUserAgent, "")
	w.buf = append(b, '\r', '\n')
	return w.buf
}

func (w *requestWriter) post(h *Hit, contentType string) []byte {
	b := append(w.buf[:0], "POST "...)
	b = append(b, w.prefix...)
	b = append(b, "/v1/events"...)
	b = w.appendHead(b, h.UA, h.IP)
	b = appendHeaders(b, browserHeaders(h.UA, true))
	b = append(b, "Content-Type: "...)
	b = append(b, contentType...)
	b = append(b, "\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(w.body)), 10)
	b = append(b, "\r\n\r\n"...)
	w.buf = append(b, w.body...)
	return w.buf
}

// appendHead ends the request line and writes the headers every request
// has; the caller adds its own and the blank line.
func (w *requestWriter) appendHead(b []byte, ua, ip string) []byte {
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, w.host...)
	b = append(b, "\r\n"...)
	if ua != "" { // as net/http: an empty User-Agent is no header
		b = append(b, "User-Agent: "...)
		b = append(b, ua...)
		b = append(b, "\r\n"...)
	}
	if ip != "" {
		b = append(b, "X-Forwarded-For: "...)
		b = append(b, ip...)
		b = append(b, "\r\n"...)
	}
	return b
}

// appendPixelTarget appends /p.gif?site=S&page=P&ref=R&id=ID[&wd=1].
func appendPixelTarget(b []byte, h *Hit) []byte {
	b = append(b, "/p.gif?site="...)
	b = appendEscaped(b, h.Site, true)
	b = append(b, "&page="...)
	b = appendEscaped(b, h.Page, true)
	b = append(b, "&ref="...)
	b = appendEscaped(b, h.Referrer, true)
	b = append(b, "&id="...)
	b = appendEscaped(b, h.ID, true)
	if h.Webdriver {
		b = append(b, "&wd=1"...)
	}
	return b
}

// keepByte reports whether c may go unescaped into a query value (inQuery)
// or a path segment: RFC 3986's unreserved characters, and in a query also
// '/', ':' and '@', which pages and referrers are full of and which
// url.ParseQuery decodes exactly as their escapes. Everything else ('&',
// '=', '+', '%', ';', '#', space, non-ASCII…) is percent-encoded.
func keepByte(c byte, inQuery bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
		c == '-', c == '.', c == '_', c == '~':
		return true
	case c == '/', c == ':', c == '@':
		return inQuery
	}
	return false
}

// appendEscaped appends s percent-encoded; a string that needs no escape
// (nearly all) is copied in one go.
func appendEscaped(b []byte, s string, inQuery bool) []byte {
	i := 0
	for i < len(s) && keepByte(s[i], inQuery) {
		i++
	}
	if i == len(s) {
		return append(b, s...)
	}
	const hex = "0123456789ABCDEF"
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if c := s[i]; keepByte(c, inQuery) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return b
}

// appendBatchBody appends the hits as a JSON array of beacon events.
func appendBatchBody(b []byte, hits []Hit) []byte {
	b = append(b, '[')
	for i := range hits {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendBeaconEvent(b, &hits[i])
	}
	return append(b, ']')
}

// appendBeaconEvent appends the hit as the JSON object json.Marshal makes of
// its ingest.BeaconEvent: the same fields in the same order, hints omitted
// when nil, strings decoding to the same values.
func appendBeaconEvent(b []byte, h *Hit) []byte {
	b = append(b, `{"site":`...)
	b = appendJSONString(b, h.Site)
	b = append(b, `,"page":`...)
	b = appendJSONString(b, h.Page)
	b = append(b, `,"referrer":`...)
	b = appendJSONString(b, h.Referrer)
	b = append(b, `,"id":`...)
	b = appendJSONString(b, h.ID)
	b = append(b, `,"webdriver":`...)
	b = strconv.AppendBool(b, h.Webdriver)
	if x := h.Hints; x != nil {
		b = append(b, `,"hints":{"sw":`...)
		b = strconv.AppendInt(b, x.ScreenW, 10)
		b = append(b, `,"sh":`...)
		b = strconv.AppendInt(b, x.ScreenH, 10)
		b = append(b, `,"lang":`...)
		b = strconv.AppendInt(b, x.Languages, 10)
		b = append(b, `,"tz":`...)
		b = strconv.AppendBool(b, x.TZ)
		b = append(b, `,"uad":`...)
		b = strconv.AppendBool(b, x.UAData)
		b = append(b, `,"sec":`...)
		b = strconv.AppendBool(b, x.Secure)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string that decodes to what
// json.Marshal's encoding of s decodes to: invalid UTF-8 becomes U+FFFD as
// there. HTML characters are not escaped (encoding/json's \u003c is the
// same value). Printable ASCII without quotes or backslashes, nearly every
// string here, is copied in one go.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	i := 0
	for i < len(s) && ' ' <= s[i] && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
		i++
	}
	b = append(b, s[:i]...)
	const hex = "0123456789abcdef"
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < ' ':
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		i++
	}
	return append(b, '"')
}
