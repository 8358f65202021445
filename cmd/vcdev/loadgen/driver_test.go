package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer answers every hit with status(n) for the n-th request (from
// 1) and counts the events it decoded; it answers count reads with 200.
// Its /metrics counts an event as inserted insertDelay after its answer,
// and exports the memory gauges when asked.
type countingServer struct {
	*httptest.Server
	requests, events atomic.Int64

	mu       sync.Mutex
	answered []answeredAt    // cumulative events by answer time
	pages    map[string]int  // pages of hits and reads
	paths    map[string]bool // request paths seen
}

type answeredAt struct {
	at     time.Time
	events int64
}

type serverOpts struct {
	status      func(n int64) int
	delay       time.Duration // before each answer
	insertDelay time.Duration
	memory      bool
}

func newCountingServer(t *testing.T, status func(n int64) int, delay time.Duration) *countingServer {
	return newTestServer(t, serverOpts{status: status, delay: delay})
}

func newTestServer(t *testing.T, o serverOpts) *countingServer {
	t.Helper()
	s := &countingServer{pages: make(map[string]int), paths: make(map[string]bool)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			fmt.Fprintf(w, "# TYPE viewcount_rows_inserted_total counter\nviewcount_rows_inserted_total %d\n", s.inserted(o.insertDelay))
			if o.memory {
				fmt.Fprintf(w, "# TYPE process_resident_memory_bytes gauge\nprocess_resident_memory_bytes 1.048576e+08\n")
				fmt.Fprintf(w, "go_memstats_heap_inuse_bytes{note=\"labelled: ignored\"} 1\ngo_memstats_heap_inuse_bytes %d\n", 50<<20+s.requests.Load())
			}
			return
		}
		n := s.requests.Add(1)
		s.mu.Lock()
		s.paths[r.URL.Path] = true
		s.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/v1/sites/") && strings.HasSuffix(r.URL.Path, "/count") {
			s.mu.Lock()
			s.pages[r.URL.Query().Get("page")]++
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"views":1}`)
			return
		}
		hs, err := decodeHits(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		time.Sleep(o.delay)
		code := o.status(n)
		if code/100 == 2 {
			total := s.events.Add(int64(len(hs)))
			s.mu.Lock()
			s.answered = append(s.answered, answeredAt{time.Now(), total})
			for _, h := range hs {
				s.pages[h.Page]++
			}
			s.mu.Unlock()
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(s.Close)
	return s
}

// inserted is how many events were answered at least delay ago.
func (s *countingServer) inserted(delay time.Duration) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	cut := time.Now().Add(-delay)
	i := sort.Search(len(s.answered), func(i int) bool { return s.answered[i].at.After(cut) })
	if i == 0 {
		return 0
	}
	return s.answered[i-1].events
}

// seenPages is the pages hit or read so far.
func (s *countingServer) seenPages() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.pages)
}

func ok(int64) int { return http.StatusOK }

func testSource(t *testing.T) Source {
	return newTestGenerator(t, DefaultMix(), 99)
}

func TestRunClosedLoopRequests(t *testing.T) {
	srv := newCountingServer(t, ok, 0)
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 8, Requests: 500, Endpoint: EndpointMix, Lag: true}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 500 || rep.OK != 500 || rep.Failed != 0 || srv.requests.Load() != 500 {
		t.Fatalf("report %d requests (%d ok, %d failed), server saw %d; want 500", rep.Requests, rep.OK, rep.Failed, srv.requests.Load())
	}
	if rep.Events != 500 || rep.Sent.Total() != 500 || rep.Status["200"] != 500 {
		t.Fatalf("events %d, tally %d, status %v", rep.Events, rep.Sent.Total(), rep.Status)
	}
	if rep.Latency.P50 <= 0 || rep.Latency.P99 < rep.Latency.P50 || rep.Latency.Max < rep.Latency.P99 {
		t.Fatalf("latency %+v", rep.Latency)
	}
	if rep.Lag == nil || !rep.Lag.Reached || rep.Lag.Rows != 500 {
		t.Fatalf("lag %+v (%s)", rep.Lag, rep.LagError)
	}
}

func TestRunBatch(t *testing.T) {
	srv := newCountingServer(t, ok, 0)
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 4, Requests: 20, Endpoint: EndpointBatch, Batch: 25}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 20 || rep.Events != 500 || srv.events.Load() != 500 || rep.Batch != 25 {
		t.Fatalf("%d requests, %d events reported, %d decoded", rep.Requests, rep.Events, srv.events.Load())
	}
}

func TestRunCountsErrorsByStatus(t *testing.T) {
	srv := newCountingServer(t, func(n int64) int {
		switch {
		case n%10 == 0:
			return http.StatusServiceUnavailable
		case n%10 == 5:
			return http.StatusBadRequest
		}
		return http.StatusOK
	}, 0)
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 1, Requests: 100}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"200": 80, "400": 10, "503": 10}
	if fmt.Sprint(rep.Status) != fmt.Sprint(want) || rep.OK != 80 || rep.Failed != 20 || rep.Events != 80 {
		t.Fatalf("status %v ok %d failed %d events %d", rep.Status, rep.OK, rep.Failed, rep.Events)
	}
}

func TestRunTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	rep, err := Run(context.Background(), Config{Server: url, Connections: 2, Requests: 10}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 0 || rep.Failed != 10 || rep.TransportErrors["connection refused"] != 10 {
		t.Fatalf("requests %d failed %d errors %v", rep.Requests, rep.Failed, rep.TransportErrors)
	}
}

func TestRunOpenLoop(t *testing.T) {
	srv := newCountingServer(t, ok, 0)
	var progress strings.Builder
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 4, Rate: 200, Duration: 1200 * time.Millisecond, Progress: &progress}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 240 {
		t.Fatalf("%d requests at 200/s for 1.2s, want 240", rep.Requests)
	}
	if rep.Elapsed < 1.1 || rep.Elapsed > 2 {
		t.Fatalf("took %.2fs", rep.Elapsed)
	}
	if !strings.Contains(progress.String(), "req/s") {
		t.Fatalf("no progress line: %q", progress.String())
	}
}

// TestRunOpenLoopNoCoordinatedOmission: a server that can answer 20
// requests a second, offered 40 a second on one connection, queues; latency
// measured from the scheduled time shows the queue, not just the 50 ms
// service time.
func TestRunOpenLoopNoCoordinatedOmission(t *testing.T) {
	srv := newCountingServer(t, ok, 50*time.Millisecond)
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 1, Rate: 40, Duration: 500 * time.Millisecond}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 20 {
		t.Fatalf("%d requests, want 20", rep.Requests)
	}
	if rep.Latency.Max < 400 || rep.Latency.P50 < 150 {
		t.Fatalf("latency %+v: the queueing delay is missing", rep.Latency)
	}
}

func TestRunCancel(t *testing.T) {
	// Cancelled once the server has seen requests, not after a fixed time:
	// on a loaded machine 300 ms once passed before the first request.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := newCountingServer(t, func(n int64) int {
		if n == 20 {
			cancel()
		}
		return ok(n)
	}, 0)
	rep, err := Run(ctx, Config{Server: srv.URL, Connections: 4, Duration: time.Hour}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.Requests == 0 || rep.Elapsed > 5 {
		t.Fatalf("interrupted %v, %d requests in %.1fs", rep.Interrupted, rep.Requests, rep.Elapsed)
	}
}

func TestRefusesRemote(t *testing.T) {
	for _, u := range []string{"http://192.0.2.1/", "http://example.com:8080", "https://[2001:db8::1]/", "http://10.0.0.1:8080"} {
		if _, err := CheckTarget(u, false); !errors.Is(err, ErrRemote) {
			t.Errorf("CheckTarget(%q) = %v, want ErrRemote", u, err)
		}
		if _, err := Run(context.Background(), Config{Server: u, Requests: 1}, testSource(t)); !errors.Is(err, ErrRemote) {
			t.Errorf("Run(%q) = %v, want ErrRemote", u, err)
		}
		if _, err := CheckTarget(u, true); err != nil {
			t.Errorf("CheckTarget(%q, allowRemote) = %v", u, err)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080", "http://127.1.2.3/", "http://[::1]:80", "http://localhost:8080", "https://app.localhost/"} {
		if _, err := CheckTarget(u, false); err != nil {
			t.Errorf("CheckTarget(%q) = %v", u, err)
		}
	}
	for _, u := range []string{"ftp://127.0.0.1/", "127.0.0.1:8080", "http:///p"} {
		if _, err := CheckTarget(u, false); err == nil {
			t.Errorf("CheckTarget(%q) accepted", u)
		}
	}
	if err := loopbackOnly("tcp", "93.184.215.14:80", nil); !errors.Is(err, ErrRemote) {
		t.Errorf("dial guard let a remote address through: %v", err)
	}
}

func TestReportJSONShape(t *testing.T) {
	srv := newCountingServer(t, ok, 0)
	b, err := StartBaseline()
	if err != nil {
		t.Fatal(err)
	}
	base, err := Run(context.Background(), Config{Server: b.URL, Connections: 2, Requests: 50}, testSource(t))
	if cerr := b.Close(); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if base.OK != 50 {
		t.Fatalf("baseline answered %d of 50 with 2xx: %v", base.OK, base.Status)
	}
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 2, Requests: 50}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(Compare(base, rep))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"baseline", "server", "ratio"} {
		if doc[k] == nil {
			t.Fatalf("no %q in %s", k, raw)
		}
	}
	for _, k := range []string{"target", "endpoint", "connections", "elapsed_seconds", "requests", "ok", "failed", "events",
		"requests_per_second", "events_per_second", "latency_ms", "status", "sent"} {
		if _, ok := doc["server"][k]; !ok {
			t.Errorf("server report lacks %q: %s", k, raw)
		}
	}
	lat, _ := doc["server"]["latency_ms"].(map[string]any)
	for _, k := range []string{"p50", "p90", "p99", "p99_9", "max", "mean"} {
		if _, ok := lat[k].(float64); !ok {
			t.Errorf("latency lacks %q", k)
		}
	}
	for _, k := range []string{"throughput", "p50", "p99"} {
		if _, ok := doc["ratio"][k].(float64); !ok {
			t.Errorf("ratio lacks %q", k)
		}
	}
	var text strings.Builder
	Compare(base, rep).WriteText(&text)
	for _, s := range []string{"baseline", "p99.9", "server/baseline"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
}

func TestConfigValidation(t *testing.T) {
	for _, c := range []Config{
		{Endpoint: "carrier-pigeon"},
		{Batch: 101},
		{Connections: -1},
		{Rate: -1},
	} {
		if _, err := Run(context.Background(), c, testSource(t)); err == nil || errors.Is(err, ErrRemote) {
			t.Errorf("Run(%+v) = %v, want a config error", c, err)
		}
	}
}

func TestRunCount(t *testing.T) {
	srv := newCountingServer(t, ok, 0)
	mix := HumanMix()
	mix.Pages = 50
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 4, Requests: 400, Endpoint: EndpointCount, Lag: true},
		newTestGenerator(t, mix, 5))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK != 400 || rep.Failed != 0 || rep.Events != 0 || rep.Sent.Total() != 0 {
		t.Fatalf("ok %d failed %d events %d sent %d: %v", rep.OK, rep.Failed, rep.Events, rep.Sent.Total(), rep.TransportErrors)
	}
	if rep.Lag != nil || rep.LagSeries != nil || rep.LagError != "" {
		t.Fatalf("lag measured for count reads: %+v %+v %q", rep.Lag, rep.LagSeries, rep.LagError)
	}
	srv.mu.Lock()
	paths := maps.Clone(srv.paths)
	srv.mu.Unlock()
	if !paths["/v1/sites/load.example/count"] || len(paths) != 1 {
		t.Fatalf("paths %v", paths)
	}
	checkPages(t, srv.seenPages(), 50, 400)
	var text strings.Builder
	rep.WriteText(&text)
	if strings.Contains(text.String(), "events/s") {
		t.Errorf("count report speaks of events:\n%s", text.String())
	}
}

// checkPages: every page is in the catalogue of n, several are, and the
// home page (the head of the Zipf curve) is the most viewed.
func checkPages(t *testing.T, pages map[string]int, n, total int) {
	t.Helper()
	catalogue := make(map[string]bool)
	for i := range n {
		catalogue[pagePath(i)] = true
	}
	sum, top := 0, ""
	for p, c := range pages {
		if !catalogue[p] {
			t.Fatalf("page %q not among the %d pages", p, n)
		}
		if top == "" || c > pages[top] {
			top = p
		}
		sum += c
	}
	if sum != total || len(pages) < 5 || top != "/" {
		t.Fatalf("%d views on %d pages, most on %q: %v", sum, len(pages), top, pages)
	}
}

func TestRunHotAndPages(t *testing.T) {
	for _, ep := range []Endpoint{EndpointPixel, EndpointBatch, EndpointCount} {
		t.Run(string(ep), func(t *testing.T) {
			mix := HumanMix()
			mix.Pages = 30
			srv := newCountingServer(t, ok, 0)
			rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 2, Requests: 40, Endpoint: ep, Batch: 10},
				newTestGenerator(t, mix, 8))
			if err != nil {
				t.Fatal(err)
			}
			views := 40
			if ep == EndpointBatch {
				views = 400
			}
			if rep.OK != 40 {
				t.Fatalf("ok %d: %v %v", rep.OK, rep.Status, rep.TransportErrors)
			}
			checkPages(t, srv.seenPages(), 30, views)

			mix.HotPage = true
			srv = newCountingServer(t, ok, 0)
			if _, err := Run(context.Background(), Config{Server: srv.URL, Connections: 2, Requests: 40, Endpoint: ep, Batch: 10},
				newTestGenerator(t, mix, 8)); err != nil {
				t.Fatal(err)
			}
			if got := srv.seenPages(); len(got) != 1 || got["/"] != views {
				t.Fatalf("hot page: %v, want %d on /", got, views)
			}
		})
	}
}
