package latency_test

import (
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/latency/latencytest"
)

// TestRequestLabels: a request is counted under its route's template and
// its status's class; every unmatched request shares one route value, and
// a route shows only the classes it answered.
func TestRequestLabels(t *testing.T) {
	h := latency.New()
	h.Request("/p.gif", 200, 300*time.Microsecond)
	h.Request("/p.gif", 200, 2*time.Millisecond)
	h.Request("/p.gif", 429, time.Millisecond)
	h.Request("/v1/sites/:site/count", 304, time.Millisecond)
	h.Request("/v1/sites/:site/count", 503, 6*time.Second)
	h.Request("", 404, time.Millisecond)
	h.Request("", 405, time.Millisecond)
	h.Request("/odd", 99, time.Millisecond)  // no such codes are answered;
	h.Request("/odd", 700, time.Millisecond) // they are kept in range

	s := latencytest.Read(t, h)
	f := func(route, class string, want uint64) {
		t.Helper()
		if got := s.Count(t, latency.RequestName, "route", route, "status", class); got != want {
			t.Errorf("route %q status %s: %d requests, want %d", route, class, got, want)
		}
	}
	f("/p.gif", "2xx", 2)
	f("/p.gif", "4xx", 1)
	f("/v1/sites/:site/count", "3xx", 1)
	f("/v1/sites/:site/count", "5xx", 1)
	f(latency.Unmatched, "4xx", 2)
	f("/odd", "1xx", 1)
	f("/odd", "5xx", 1)
	if got := len(s.Series(latency.RequestName)); got != 7 {
		t.Errorf("%d series, want 7 (only the classes answered): %v", got, s.Series(latency.RequestName))
	}
	// Buckets are cumulative and in seconds: of the pixel's two 2xx,
	// one took at most 0.5 ms.
	for _, b := range s.Histogram(t, latency.RequestName, "route", "/p.gif", "status", "2xx").GetBucket() {
		want := uint64(0)
		switch ub := b.GetUpperBound(); {
		case ub >= 0.0025:
			want = 2
		case ub >= 0.0005:
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), want)
		}
	}
}

// TestSingleHistograms: each of the others counts what it is given, and
// is served before anything was observed (at 0), so a dashboard has a
// series to draw from the start.
func TestSingleHistograms(t *testing.T) {
	h := latency.New()
	names := []string{latency.IngestAckName, latency.InsertName, latency.FeedName, latency.FeedLagName, latency.ValidationLagName}
	s := latencytest.Read(t, h)
	for _, name := range names {
		if s.Histogram(t, name) == nil {
			t.Errorf("%s: not served before its first observation", name)
		}
	}
	h.IngestAck(time.Millisecond)
	h.Insert(50 * time.Millisecond)
	h.Insert(time.Second)
	h.Feed(150 * time.Millisecond)
	h.FeedLag(3 * time.Second)
	h.ValidationLag(4 * time.Second)
	h.ValidationLag(-time.Second) // a clock step: counted as 0, not as negative
	s = latencytest.Read(t, h)
	for i, want := range []uint64{1, 2, 1, 1, 2} {
		if got := s.Count(t, names[i]); got != want {
			t.Errorf("%s: %d observations, want %d", names[i], got, want)
		}
	}
	if sum := s.Histogram(t, latency.ValidationLagName).GetSampleSum(); sum != 4 {
		t.Errorf("validation lag sum %g, want 4 (the negative one as 0)", sum)
	}
}

// TestRequestAllocs: once a route has answered a class, recording another
// such request allocates nothing: it runs on every pixel.
func TestRequestAllocs(t *testing.T) {
	h := latency.New()
	route := "/p.gif"
	h.Request(route, 200, time.Millisecond)
	if n := testing.AllocsPerRun(1000, func() { h.Request(route, 200, time.Millisecond) }); n != 0 {
		t.Errorf("%v allocations per request, want 0", n)
	}
}

// TestRequestConcurrent: routes appear while others are recorded and
// scraped (run with -race).
func TestRequestConcurrent(t *testing.T) {
	h := latency.New()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				h.Request("/r"+strconv.Itoa(i%20), 200+100*(g%4), time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if _, err := h.WriteTo(io.Discard); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	s := latencytest.Read(t, h)
	var total uint64
	for i := range 20 {
		for _, class := range []string{"2xx", "3xx", "4xx", "5xx"} {
			total += s.Count(t, latency.RequestName, "route", "/r"+strconv.Itoa(i), "status", class)
		}
	}
	if total != 8*200 {
		t.Errorf("%d requests counted, want %d", total, 8*200)
	}
}

// BenchmarkRequest is the cost a request pays for its histogram: the
// route's lookup and the observation (BenchmarkPixel includes it).
func BenchmarkRequest(b *testing.B) {
	h := latency.New()
	for _, r := range []string{"/p.gif", "/v1/events", "/vc.js", "/v1/sites/:site/count", "/metrics"} {
		h.Request(r, 200, time.Millisecond)
	}
	b.ReportAllocs()
	for b.Loop() {
		h.Request("/p.gif", 200, 250*time.Microsecond)
	}
}
