package ingest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/latency/latencytest"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

// TestIngestLatencyHistograms drives hits through the router onto a real
// JetStream: each request is timed under its route's template and status
// class, and each acknowledged one's wait for its ack is recorded; a
// refused one waits for nothing.
func TestIngestLatencyHistograms(t *testing.T) {
	c := streamtest.Open(t, 2)
	m := viewcount.NewMetricsWith(latency.New())
	pub := runPublisher(t, c.JS, 2, m)
	kv, err := c.KV(context.Background(), viewcount.BucketSalts)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, pub, NewSalts(kv, &countingRandom{next: 1}, discard()), func() time.Time { return testNow }, nil)

	for i := range 3 {
		q := url.Values{"site": {"example.com"}, "page": {"/a"}, "id": {"pixel-" + string(rune('a'+i))}}
		checkGIF(t, srv.pixel(q.Encode()), http.StatusOK)
	}
	checkGIF(t, srv.pixel("site=example.com"), http.StatusBadRequest) // no page
	checkGIF(t, srv.do(httptest.NewRequest(http.MethodGet, "/p.gif/?site=example.com&page=/b", nil)), http.StatusOK)
	if w := srv.beacon("application/json", `{"site":"example.com","page":"/c"}`); w.Code != http.StatusAccepted {
		t.Fatalf("beacon: %d %s", w.Code, w.Body)
	}
	if w := srv.beacon("application/xml", `<hit/>`); w.Code != http.StatusUnsupportedMediaType {
		t.Fatalf("beacon as XML: %d", w.Code)
	}

	s := latencytest.Read(t, srv.metrics)
	f := func(route, class string, want uint64) {
		t.Helper()
		if got := s.Count(t, latency.RequestName, "route", route, "status", class); got != want {
			t.Errorf("route %q status %s: %d, want %d", route, class, got, want)
		}
	}
	f("/p.gif", "2xx", 3)
	f("/p.gif", "4xx", 1)
	f("/p.gif/*rest", "2xx", 1)
	f("/v1/events", "2xx", 1)
	f("/v1/events", "4xx", 1)
	if got := len(s.Series(latency.RequestName)); got != 5 {
		t.Errorf("series %v, want the five above", s.Series(latency.RequestName))
	}

	// Five requests were made durable; the two refused never reached the
	// publisher.
	ack := latencytest.Read(t, m).Histogram(t, latency.IngestAckName)
	if ack.GetSampleCount() != 5 || ack.GetSampleSum() <= 0 {
		t.Errorf("ingest ack: %d observations, %g s in all; want 5 taking some time", ack.GetSampleCount(), ack.GetSampleSum())
	}
}
