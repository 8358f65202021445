package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// Public reads (counts and the badge) answer cross-origin requests: a
// creator's page on its own origin shows its counts (docs/counts.md), which
// a browser blocks without these headers. The data is public and the same
// for every origin, so the answer is "*", never the request's Origin: no
// Vary: Origin is needed and a shared cache keeps one copy. No credentials
// are allowed ("*" forbids them), so no cookie or token ever rides along;
// the endpoints that take a Bearer token get no CORS at all (the dashboard
// is same-origin).
//
// The values are shared slices assigned to the header map, never modified:
// the count's hit path must not allocate (BenchmarkCountCacheHit).
var (
	corsAnyOrigin = []string{"*"}
	// A day: Firefox honours up to 24 h, Chromium caps at 2 h by itself.
	corsMaxAge     = []string{"86400"}
	corsAllowHdrs  = []string{"Content-Type"}
	corsGetMethods = []string{"GET"}
	corsAllMethods = []string{"GET, POST"}
)

// allowAnyOrigin marks a public answer readable by any origin. It is set
// before the handler decides anything, so an error answer is readable too
// and a page's script can show why its request failed.
func allowAnyOrigin(c *gin.Context) {
	c.Writer.Header()["Access-Control-Allow-Origin"] = corsAnyOrigin
}

// preflight answers OPTIONS for a public read that allows methods. Only
// a POST of JSON needs one (GETs and text/plain POSTs are simple requests);
// answering every public path keeps a client that always preflights
// working rather than meeting 405.
func preflight(methods []string) gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Writer.Header()
		h["Access-Control-Allow-Origin"] = corsAnyOrigin
		h["Access-Control-Allow-Methods"] = methods
		h["Access-Control-Allow-Headers"] = corsAllowHdrs
		h["Access-Control-Max-Age"] = corsMaxAge
		c.Status(http.StatusNoContent)
	}
}
