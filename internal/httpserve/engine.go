package httpserve

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount/internal/redact"
)

// NewEngine returns the HTTP router every role registers on. Only requests
// from trustedProxies (CIDRs) may set the client IP with X-Forwarded-For;
// with none, the socket's peer is the client. Every request's latency goes
// to requests (ObserveRequests), unless it is nil. Gin's request logger is
// left out on purpose: it logs client IPs, which must never reach a log.
func NewEngine(trustedProxies []string, requests RequestObserver) (*gin.Engine, error) {
	return newEngine(trustedProxies, requests, os.Stderr)
}

// newEngine is NewEngine with gin's recovery output going to w.
func newEngine(trustedProxies []string, requests RequestObserver, w io.Writer) (*gin.Engine, error) {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	// The timing goes first, outside the recovery, so a handler that
	// panics is timed with the 500 the recovery answers.
	if requests != nil {
		e.Use(ObserveRequests(requests))
	}
	// Gin's recovery prints the request's headers on a broken pipe
	// (X-Forwarded-For included) and error texts naming both socket
	// addresses: the writer masks every address before it is written.
	e.Use(gin.RecoveryWithWriter(redact.NewWriter(w)), noSniff)
	e.RemoteIPHeaders = []string{"X-Forwarded-For", "X-Real-IP"}
	if err := e.SetTrustedProxies(trustedProxies); err != nil {
		return nil, fmt.Errorf("httpserve: trusted proxies: %w", err)
	}
	if len(trustedProxies) == 0 {
		e.ForwardedByClientIP = false
	}
	e.HandleMethodNotAllowed = true
	e.NoRoute(func(c *gin.Context) { c.JSON(404, gin.H{"error": "not found"}) })
	return e, nil
}

// nosniffValue is shared by every answer, never modified: assigning it
// costs the count's hit path no allocation (api's BenchmarkCountCacheHit).
var nosniffValue = []string{"nosniff"}

// noSniff tells browsers to take every answer as the type it declares.
// JSON and CSV answers echo text a visitor or a caller chose (page paths,
// referrers, site names, error messages naming a parameter); without it a
// browser may sniff such an answer, opened as a page or loaded by a
// <script> or <link> elsewhere, as HTML, script or a style sheet. Set here,
// on the engine every role serves on, so every route (ingest's, the api's,
// those of api/stats and api/dashboard, the health routes, the 404 and 405
// answers, routes added later) has it; the pixel's GIF, the badge's SVG and
// vc.js declare their real types.
// TestEveryAnswerIsNoSniff (cmd/viewcount) walks every route.
func noSniff(c *gin.Context) {
	c.Writer.Header()["X-Content-Type-Options"] = nosniffValue
}

// RequestObserver records how long a request took; *viewcount.Metrics
// satisfies it. route is the matched route's template ("" when none
// matched), status the answer's code. It runs on every request and must
// not allocate.
type RequestObserver interface {
	ObserveRequest(route string, status int, d time.Duration)
}

// ObserveRequests times each request from the moment the router matched it
// to its handlers' return, labelled by the route's template (Gin's
// FullPath), so the series are bounded by the routes, never by the paths
// clients send. The answer is written into net/http's buffer by then, not
// yet onto the wire. Redirects the router answers by itself (a trailing
// slash) run no handler and are not timed.
func ObserveRequests(obs RequestObserver) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		obs.ObserveRequest(c.FullPath(), c.Writer.Status(), time.Since(start))
	}
}
