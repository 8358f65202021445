package httpserve

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// Checker reports whether a dependency (stream, store) is reachable.
type Checker func(ctx context.Context) error

// Metrics is what the health routes read (viewcount.Metrics): the parts'
// reports about themselves, and the exposition /metrics serves.
type Metrics interface {
	// Failing is every part that reported a problem, by part name.
	Failing() map[string]string
	io.WriterTo
}

// Health registers /healthz, /readyz and /metrics, which every process
// mounts whatever its roles. /readyz runs checks live, each under a 2 s
// bound, then adds what the parts reported through metrics.
func Health(r gin.IRouter, checks map[string]Checker, metrics Metrics) {
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/readyz", func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		// Live probes first, then what the parts reported about themselves
		// (a store that answers pings can still refuse inserts; a stream
		// that is reachable can still refuse writes).
		failed := gin.H{}
		for name, check := range checks {
			if err := check(ctx); err != nil {
				failed[name] = err.Error()
			}
		}
		for part, problem := range metrics.Failing() {
			if _, ok := failed[part]; !ok {
				failed[part] = problem
			}
		}
		if len(failed) > 0 {
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "failed": failed})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "ready"})
	})
	r.GET("/metrics", func(c *gin.Context) {
		c.Header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		c.Status(http.StatusOK)
		_, _ = metrics.WriteTo(c.Writer)
	})
}
