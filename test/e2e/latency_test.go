package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/latency/latencytest"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestLatencyHistogramsServed: the process as it runs wires every
// histogram to what it measures, and /metrics serves them: once hits are
// counted, each one has observations, and the requests are under their
// routes' templates.
func TestLatencyHistogramsServed(t *testing.T) {
	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	c.AddSite("lat.example")
	for i := range 3 {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.FirefoxUA, Site: "lat.example", Page: "/a"}); code != http.StatusOK {
			t.Fatalf("pixel: %d", code)
		}
	}
	if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(9), UA: apptest.FirefoxUA, Site: "lat.example", Page: "/a", Beacon: true}); code != http.StatusAccepted {
		t.Fatalf("beacon: %d", code)
	}
	apptest.Eventually(t, time.Minute, func() string {
		if _, cnt, _ := c.Count("lat.example", "/a"); cnt.Views != 4 {
			return fmt.Sprintf("/a: %d views, want 4", cnt.Views)
		}
		req, _ := http.NewRequest("GET", c.Base+"/metrics", nil)
		code, body := c.Do(req)
		if code != http.StatusOK {
			return fmt.Sprintf("/metrics: %d", code)
		}
		s := latencytest.Read(t, bytes.NewReader(body))
		for _, w := range []struct {
			name   string
			labels []string
			min    uint64
		}{
			{latency.RequestName, []string{"route", "/p.gif", "status", "2xx"}, 3},
			{latency.RequestName, []string{"route", "/v1/events", "status", "2xx"}, 1},
			{latency.RequestName, []string{"route", "/v1/sites/:site/count", "status", "2xx"}, 1},
			{latency.IngestAckName, nil, 4},
			{latency.InsertName, nil, 1},
			{latency.FeedName, nil, 1},
			{latency.FeedLagName, nil, 1},
			{latency.ValidationLagName, nil, 1},
		} {
			if got := s.Count(t, w.name, w.labels...); got < w.min {
				return fmt.Sprintf("%s%v: %d observations, want at least %d", w.name, w.labels, got, w.min)
			}
		}
		return ""
	})
}
