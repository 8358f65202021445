package httpserve

import (
	"fmt"
	"io"
	"os"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount/internal/redact"
)

// NewEngine returns the HTTP router every role registers on. Only requests
// from trustedProxies (CIDRs) may set the client IP with X-Forwarded-For;
// with none, the socket's peer is the client. Gin's request logger is left
// out on purpose: it logs client IPs, which must never reach a log.
func NewEngine(trustedProxies []string) (*gin.Engine, error) {
	return newEngine(trustedProxies, os.Stderr)
}

// newEngine is NewEngine with gin's recovery output going to w.
func newEngine(trustedProxies []string, w io.Writer) (*gin.Engine, error) {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
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
