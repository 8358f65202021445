package httpserve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/latency/latencytest"
)

// TestRequestsTimedByRoute: every request through the engine is timed
// under its route's template, whatever the path's parameters; a request
// no route matched (404, 405) under "unmatched"; a handler's panic under
// the 500 the recovery answers; a trailing-slash redirect, which the
// router answers without a handler, not at all.
func TestRequestsTimedByRoute(t *testing.T) {
	m := viewcount.NewMetricsWith(latency.New())
	e, err := newEngine(nil, m, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	e.GET("/v1/sites/:site/count", func(c *gin.Context) {
		if c.Param("site") == "gone.example" {
			c.JSON(http.StatusNotFound, gin.H{"error": "no such site"})
			return
		}
		c.JSON(http.StatusOK, gin.H{"views": 1})
	})
	e.GET("/boom", func(*gin.Context) { panic("boom") })
	Health(e, nil, m)

	for _, r := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/v1/sites/a.example/count", 200},
		{"GET", "/v1/sites/b.example/count?page=/x", 200},
		{"GET", "/v1/sites/gone.example/count", 404},
		{"GET", "/nowhere", 404},
		{"GET", "/also/nowhere", 404},
		{"POST", "/boom", 405},
		{"GET", "/boom", 500},
		{"GET", "/metrics/", 301},
		{"GET", "/metrics", 200},
	} {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(r.method, r.path, nil))
		if w.Code != r.code {
			t.Fatalf("%s %s: %d, want %d", r.method, r.path, w.Code, r.code)
		}
	}

	s := latencytest.Read(t, m)
	f := func(route, class string, want uint64) {
		t.Helper()
		if got := s.Count(t, latency.RequestName, "route", route, "status", class); got != want {
			t.Errorf("route %q status %s: %d, want %d", route, class, got, want)
		}
	}
	f("/v1/sites/:site/count", "2xx", 2)
	f("/v1/sites/:site/count", "4xx", 1)
	f(latency.Unmatched, "4xx", 3)
	f("/boom", "5xx", 1)
	f("/metrics", "2xx", 1) // the earlier scrape, through the engine
	got := s.Series(latency.RequestName)
	if len(got) != 5 {
		t.Errorf("series %v: want the five above (no path, no redirect)", got)
	}
}
