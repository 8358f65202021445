package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/redact"
)

// Config tunes the handlers. Zero values mean the defaults.
type Config struct {
	KeepQuery      bool          // keep the page's query string (off: "/p?utm=x" counts as "/p")
	MaxPageLen     int           // bytes; default DefaultMaxPageLen
	PublishTimeout time.Duration // how long a hit waits to be durable; default 5s
	Datacenter     IPRanges      // client addresses marked as datacenter traffic; nil = none
	Limiter        Limiter       // requests per client address; nil = unlimited
	// CountryHeader names a request header a CDN in front sets to the
	// client's country (e.g. "CF-IPCountry"). Only an operator can vouch
	// for it, so it is read only when named; "" = none.
	CountryHeader string
	// Countries maps client addresses to countries where the header is not
	// set or says nothing; nil = no lookup.
	Countries CountryLookup
	// ASNs maps client addresses to their autonomous system; nil = none
	// (every event's ASN is 0, unknown).
	ASNs ASNLookup
}

// ASNLookup maps an address to the AS number it is announced by, 0 when
// unknown. *asn.DB satisfies it. It must be safe for concurrent use and
// cheap: it runs on every hit.
type ASNLookup interface {
	ASN(addr netip.Addr) uint32
}

// CountryLookup maps an address to its ISO 3166-1 alpha-2 country code,
// upper case, or "" when unknown. *geo.DB satisfies it. It must be safe for
// concurrent use and cheap: it runs on every hit.
type CountryLookup interface {
	Country(addr netip.Addr) string
}

// Limiter bounds the requests of one client address; *ratelimit.Table
// satisfies it. Allow counts the request and reports whether it may go on.
type Limiter interface {
	Allow(addr netip.Addr) bool
}

// IPRanges reports whether an address is in a set of ranges; *Ranges
// satisfies it.
type IPRanges interface {
	Contains(addr netip.Addr) bool
}

// EventPublisher makes events durable. Publish returns nil only once every
// event is stored, with where (zero when not known), and a wrapped
// ErrUnavailable otherwise (also when ctx ends first). *Publisher
// satisfies it.
type EventPublisher interface {
	Publish(ctx context.Context, evs []viewcount.Event) (viewcount.StreamPosition, error)
}

// SaltSource hands out the visitor-id salts; *Salts satisfies it. For
// returns the salt of t's UTC day, creating it if need be; Existing returns
// it only if it exists (ok false once it is deleted), never creating one.
// An error from either means no visitor id can be computed and the hit is
// answered 503.
type SaltSource interface {
	For(ctx context.Context, t time.Time) ([]byte, error)
	Existing(ctx context.Context, t time.Time) (salt []byte, ok bool, err error)
}

// MaxBodyBytes bounds a beacon body.
const MaxBodyBytes = 64 << 10

// pixelGIF is a 1×1 transparent GIF, the smallest well-formed one (43 bytes).
var pixelGIF = []byte{
	'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0, // header, 1×1, 2-colour table
	0, 0, 0, 0xff, 0xff, 0xff, // colour table
	0x21, 0xf9, 4, 1, 0, 0, 0, 0, // graphic control: colour 0 transparent
	0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, // image descriptor
	2, 2, 0x44, 1, 0, // LZW image data
	0x3b, // trailer
}

//go:embed vc.js
var trackerSource []byte

// trackerJS is vc.js as served (trimScript).
var trackerJS = trimScript(trackerSource)

// Handler serves the ingest endpoints: GET /p.gif, POST /v1/events and the
// tracker script GET /vc.js.
type Handler struct {
	cfg     Config
	pub     EventPublisher
	salts   SaltSource
	metrics *viewcount.Metrics
	logger  *slog.Logger
	now     func() time.Time
	etag    string
	bufs    sync.Pool // *bytes.Buffer for beacon bodies

	lastWarn   atomic.Int64 // unix ns of the last "not stored" warning
	suppressed atomic.Int64 // 503s since then
}

// New returns the ingest handlers. now is the clock (time.Now in
// production): it stamps every event and picks the day's salt.
func New(cfg Config, pub EventPublisher, salts SaltSource, metrics *viewcount.Metrics, logger *slog.Logger, now func() time.Time) *Handler {
	if cfg.MaxPageLen <= 0 {
		cfg.MaxPageLen = DefaultMaxPageLen
	}
	if cfg.PublishTimeout <= 0 {
		cfg.PublishTimeout = 5 * time.Second
	}
	if now == nil {
		now = time.Now
	}
	sum := sha256.Sum256(trackerJS)
	return &Handler{
		cfg: cfg, pub: pub, salts: salts, metrics: metrics, now: now,
		logger: logger.With("component", "ingest"),
		etag:   `"` + hex.EncodeToString(sum[:8]) + `"`,
		bufs:   sync.Pool{New: func() any { return new(bytes.Buffer) }},
	}
}

// Routes registers the endpoints on r. The client IP is c.ClientIP(): the
// engine's trusted proxies decide whether X-Forwarded-For is believed.
//
// Whatever reaches the pixel's path answers a GIF, so an <img> never shows
// broken: HEAD gets the GIF's headers, "/p.gif/" (the router would otherwise
// redirect with an HTML body) is the pixel, any other method is 405.
func (h *Handler) Routes(r gin.IRouter) {
	r.GET("/p.gif", h.pixel)
	r.GET("/p.gif/*rest", h.pixelSlash)
	r.HEAD("/p.gif", h.pixelHead)
	r.HEAD("/p.gif/*rest", h.pixelHead)
	for _, m := range [...]string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		r.Handle(m, "/p.gif", h.pixelMethod)
		r.Handle(m, "/p.gif/*rest", h.pixelMethod)
	}
	r.POST("/v1/events", h.beacon)
	r.OPTIONS("/v1/events", h.preflight)
	r.GET("/vc.js", h.script)
}

// pixel answers GET /p.gif?site=S&page=P[&ref=R][&id=ID][&wd=1][&host=H]. It always
// returns the GIF, whatever happened, so a pixel never shows as a broken
// image: 200 once durable, 400 for a hit that cannot be parsed, 429 for a
// client over its rate (checked before any other work), 503 when it could
// not be stored.
func (h *Handler) pixel(c *gin.Context) {
	ip := clientIP(c)
	status := http.StatusTooManyRequests
	if h.allow(ip) {
		var q [len(pixelParams)]string
		viewcount.QueryValues(c.Request.URL.RawQuery, pixelParams[:], q[:])
		hit := Hit{Site: q[0], Page: q[1], Referrer: q[2], ID: q[3], Webdriver: isTrue(q[4]), Host: q[5]}
		_, err := h.accept(h.ctx(c), []Hit{hit}, noField, viewcount.SourcePixel, h.clientOf(c, ip, viewcount.SourcePixel))
		status = http.StatusOK
		if err != nil {
			status = h.failed(err)
		}
	}
	writeGIF(c, status)
}

// pixelSlash is the pixel reached as "/p.gif/", "/p.gif//": a hit like
// any other. Anything longer below it is no pixel URL: 404, as a GIF.
func (h *Handler) pixelSlash(c *gin.Context) {
	if strings.Trim(c.Param("rest"), "/") != "" {
		writeGIF(c, http.StatusNotFound)
		return
	}
	h.pixel(c)
}

// pixelHead answers HEAD with the headers a GET would get; nothing is
// recorded (a HEAD is a link checker or a cache, not a view).
func (h *Handler) pixelHead(c *gin.Context) {
	c.Writer.Header()["Content-Length"] = gifLength
	writeGIF(c, http.StatusOK)
}

// pixelMethod answers the pixel's path for methods it does not serve.
func (h *Handler) pixelMethod(c *gin.Context) {
	c.Writer.Header()["Allow"] = pixelAllow
	writeGIF(c, http.StatusMethodNotAllowed)
}

func writeGIF(c *gin.Context, status int) {
	// Assigned, not Set: the values are shared, never modified, and the
	// pixel is the hottest path there is.
	hdr := c.Writer.Header()
	hdr["Cache-Control"] = noStore
	hdr["Content-Type"] = imageGIF
	c.Writer.WriteHeader(status)
	_, _ = c.Writer.Write(pixelGIF) // net/http drops the body of a HEAD
}

var (
	noStore    = []string{"no-store"}
	imageGIF   = []string{"image/gif"}
	gifLength  = []string{strconv.Itoa(len(pixelGIF))}
	pixelAllow = []string{"GET, HEAD"}
)

// allow applies the per-client rate limit. A request without a usable
// address (never over TCP) is not limited: there is nothing to key it by.
func (h *Handler) allow(ip netip.Addr) bool {
	if h.cfg.Limiter == nil || !ip.IsValid() || h.cfg.Limiter.Allow(ip) {
		return true
	}
	h.metrics.RateLimited.Add(1)
	return false
}

// pixelParams are the query parameters the pixel reads.
var pixelParams = [...]string{"site", "page", "ref", "id", "wd", "host"}

// beacon answers POST /v1/events (JSON or text/plain, as sendBeacon sends
// it): 202 {"accepted":N,"position":"P:S"} once all N events are durable,
// P:S their stream position (viewcount.StreamPosition; absent when not
// known), else {"error": "..."} with 400, 413, 415 or 503. A bad event
// rejects the whole request, so a client can retry it as a unit. A page
// showing its own count passes the position back to the counts endpoint
// (its own view), which can tell from it whether a count includes the
// view yet.
func (h *Handler) beacon(c *gin.Context) {
	c.Header("Access-Control-Allow-Origin", "*")
	ip := clientIP(c)
	if !h.allow(ip) {
		// Before the body is read: a flood costs no decoding.
		c.Header("Retry-After", "1")
		c.JSON(http.StatusTooManyRequests, gin.H{"error": "too many requests from this address; retry later"})
		return
	}
	hits, array, err := h.readBeacon(c)
	var pos viewcount.StreamPosition
	if err == nil {
		field := noField
		if array {
			field = eventField
		}
		pos, err = h.accept(h.ctx(c), hits, field, viewcount.SourceBeacon, h.clientOf(c, ip, viewcount.SourceBeacon))
	}
	if err != nil {
		status := h.failed(err)
		c.JSON(status, gin.H{"error": messageOf(status, err)})
		return
	}
	if pos.IsZero() {
		c.JSON(http.StatusAccepted, gin.H{"accepted": len(hits)})
		return
	}
	c.JSON(http.StatusAccepted, gin.H{"accepted": len(hits), "position": pos.String()})
}

// errBodyTooLarge is one value, not one per request: the beacon path is hot.
var errBodyTooLarge = &requestError{kind: ErrTooLarge, msg: "body larger than " + strconv.Itoa(MaxBodyBytes>>10) + " KiB"}

func (h *Handler) readBeacon(c *gin.Context) ([]Hit, bool, error) {
	switch strings.ToLower(c.ContentType()) {
	case "application/json", "text/plain":
	default:
		return nil, false, &requestError{kind: ErrUnsupportedType, msg: "content type must be application/json or text/plain"}
	}
	if c.Request.ContentLength > MaxBodyBytes {
		return nil, false, errBodyTooLarge
	}
	buf := h.bufs.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 2*MaxBodyBytes {
			buf.Reset()
			h.bufs.Put(buf)
		}
	}()
	if _, err := buf.ReadFrom(http.MaxBytesReader(c.Writer, c.Request.Body, MaxBodyBytes)); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, false, errBodyTooLarge
		}
		return nil, false, badInput("reading body: %s", readFailure(err))
	}
	// decodeBeacon copies every string it keeps, so buf can be reused.
	return decodeBeacon(buf.Bytes())
}

// preflight lets pages on any origin POST JSON with fetch; sendBeacon with
// text/plain needs no preflight.
func (h *Handler) preflight(c *gin.Context) {
	c.Header("Access-Control-Allow-Origin", "*")
	c.Header("Access-Control-Allow-Methods", "POST")
	c.Header("Access-Control-Allow-Headers", "Content-Type")
	c.Header("Access-Control-Max-Age", "86400")
	c.Status(http.StatusNoContent)
}

// script serves the tracker, cacheable for an hour, gzipped for clients
// that take it (see scriptVariant).
func (h *Handler) script(c *gin.Context) {
	body, etag, gz := scriptVariant(c.GetHeader("Accept-Encoding"), h.etag)
	c.Header("Cache-Control", "public, max-age=3600")
	c.Header("Vary", "Accept-Encoding")
	c.Header("ETag", etag)
	if c.GetHeader("If-None-Match") == etag {
		c.Status(http.StatusNotModified)
		return
	}
	if gz {
		c.Header("Content-Encoding", "gzip")
	}
	c.Data(http.StatusOK, "application/javascript; charset=utf-8", body)
}

// ctx is the context a hit is stored under: the request's values, but not
// its cancellation. A visitor navigating away (the browser then drops the
// pixel request) must not cancel a hit that is already on its way.
func (h *Handler) ctx(c *gin.Context) context.Context {
	return context.WithoutCancel(c.Request.Context())
}

// clientOf is what a request tells of its client. The country and the AS
// number are decided here, while the address is at hand: the operator's CDN header when it
// names a country, else the country database. Neither the address nor the
// header's raw value goes further; nor do the headers requestFlags reads.
func (h *Handler) clientOf(c *gin.Context, ip netip.Addr, src viewcount.Source) client {
	cl := client{IP: ip, UA: normaliseUA(c.Request.UserAgent()), Headers: requestFlags(c.Request, src, ip), Origin: pageOrigin(c.Request.Header)}
	if h.cfg.CountryHeader != "" {
		cl.Country = CountryCode(c.Request.Header.Get(h.cfg.CountryHeader))
	}
	if cl.Country == "" && h.cfg.Countries != nil && ip.IsValid() {
		cl.Country = CountryCode(h.cfg.Countries.Country(ip))
	}
	if h.cfg.ASNs != nil && ip.IsValid() {
		cl.ASN = h.cfg.ASNs.ASN(ip)
	}
	return cl
}

// CountryCode accepts an ISO 3166-1 alpha-2 code as CDNs send it: two ASCII
// letters, either case, returned upper case. "XX" (Cloudflare: unknown),
// "T1" (Tor), "ZZ" (user-assigned "unknown") and anything else are "".
func CountryCode(s string) string {
	if len(s) != 2 {
		return ""
	}
	a, b := upperASCII(s[0]), upperASCII(s[1])
	if a < 'A' || a > 'Z' || b < 'A' || b > 'Z' {
		return ""
	}
	switch {
	case a == 'X' && b == 'X', a == 'Z' && b == 'Z':
		return ""
	case s[0] == a && s[1] == b:
		return s
	}
	return string([]byte{a, b})
}

func upperASCII(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// clientIP is the client's address: the peer's, or the one a trusted
// proxy reports. Invalid if it cannot be parsed.
func clientIP(c *gin.Context) netip.Addr {
	addr, _ := netip.ParseAddr(c.ClientIP())
	return addr
}

// readFailure says why a body could not be read, in words that hold no
// address: a *net.OpError's text names both ends of the connection, and
// this text is sent to the client and logged.
func readFailure(err error) string {
	var op *net.OpError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timed out"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &op):
		// The cause beneath the addresses, e.g. "read: broken pipe".
		return redact.Addresses(op.Err.Error())
	}
	return redact.Addresses(err.Error())
}

// failed counts and logs a failed request and returns its status. Neither
// the IP nor the UA is ever logged; errors here carry neither.
func (h *Handler) failed(err error) int {
	status := statusOf(err)
	if status == http.StatusServiceUnavailable {
		// An outage fails every hit: log one a second, with the count.
		now := time.Now().UnixNano()
		h.suppressed.Add(1)
		if last := h.lastWarn.Load(); now-last > int64(time.Second) && h.lastWarn.CompareAndSwap(last, now) {
			h.logger.Warn("hits not stored", "count", h.suppressed.Swap(0), "err", err)
		}
	} else {
		h.metrics.BadRequests.Add(1)
		h.logger.Debug("bad hit", "status", status, "err", err)
	}
	return status
}

// statusOf is the one place errors become HTTP status codes.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrBadInput):
		return http.StatusBadRequest
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, ErrUnsupportedType):
		return http.StatusUnsupportedMediaType
	}
	return http.StatusServiceUnavailable
}

// messageOf is what the client is told: its own mistake in full, an
// internal failure only as such (the details are logged).
func messageOf(status int, err error) string {
	var re *requestError
	if status != http.StatusServiceUnavailable && errors.As(err, &re) {
		return re.msg
	}
	if status == http.StatusServiceUnavailable {
		return "the events could not be stored; retry later"
	}
	return "bad request"
}

func noField(int) string { return "" }

func isTrue(s string) bool { return s == "1" || s == "true" }
