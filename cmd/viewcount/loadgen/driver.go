package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Endpoint is how hits are sent.
type Endpoint string

const (
	EndpointPixel  Endpoint = "pixel"  // every hit as GET /p.gif
	EndpointBeacon Endpoint = "beacon" // every hit as POST /v1/events, one object
	EndpointBatch  Endpoint = "batch"  // Config.Batch hits per POST /v1/events array
	// EndpointMix sends each hit as the traffic model says (Hit.Beacon): the
	// only endpoint whose labels hold for every class, since bad_hints and
	// farm traffic need the beacon's hints.
	EndpointMix Endpoint = "mix"
)

// Config is one load run. Zero values take the defaults noted.
type Config struct {
	Server      string   // base URL, e.g. http://127.0.0.1:8080
	Endpoint    Endpoint // default pixel
	Batch       int      // events per batch request; default 100
	Connections int      // concurrent connections, one worker each; default 64
	// Rate is the open-loop target in requests per second: requests are
	// scheduled at fixed intervals whether or not earlier ones have been
	// answered, and latency runs from the scheduled time. 0: closed loop,
	// each worker sends its next request when the previous is answered.
	Rate     float64
	Duration time.Duration // how long to send; default 10s unless Requests is set
	Requests int64         // stop after this many requests (0: Duration decides)
	Timeout  time.Duration // per request; default 30s
	// AllowRemote permits a server that is not on a loopback address.
	AllowRemote bool
	// Lag: after sending, poll the server's /metrics until
	// viewcount_rows_inserted_total has grown by the events acknowledged,
	// at most LagTimeout (default 60s).
	Lag        bool
	LagTimeout time.Duration
	Progress   io.Writer // one line a second while running; nil: quiet
}

func (c Config) withDefaults() (Config, error) {
	if c.Server == "" {
		c.Server = "http://127.0.0.1:8080"
	}
	switch c.Endpoint {
	case "":
		c.Endpoint = EndpointPixel
	case EndpointPixel, EndpointBeacon, EndpointBatch, EndpointMix:
	default:
		return c, fmt.Errorf("loadgen: endpoint %q: want pixel, beacon, batch or mix", c.Endpoint)
	}
	if c.Batch == 0 {
		c.Batch = 100
	}
	if c.Connections == 0 {
		c.Connections = 64
	}
	if c.Duration == 0 && c.Requests == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Timeout == 0 {
		c.Timeout = 30 * time.Second
	}
	if c.LagTimeout == 0 {
		c.LagTimeout = time.Minute
	}
	switch {
	case c.Batch < 1 || c.Batch > 100:
		return c, errors.New("loadgen: batch must be within 1..100 (the server's limit)")
	case c.Connections < 1:
		return c, errors.New("loadgen: connections must be at least 1")
	case c.Rate < 0 || c.Duration < 0 || c.Requests < 0 || c.Timeout < 0:
		return c, errors.New("loadgen: rate, duration, requests and timeout must not be negative")
	}
	return c, nil
}

// Source supplies hits; *Generator is one. Run serialises calls to Next.
type Source interface {
	Next() Hit
}

// workerStats is one worker's results, locked only against the progress
// reader (once a second), so recording is uncontended.
type workerStats struct {
	mu     sync.Mutex
	hist   Histogram
	status map[int]int64
	errs   map[string]int64
	tally  Tally
	events int64 // events in 2xx answers
}

// run is the state of one Run.
type run struct {
	cfg    Config
	client *http.Client
	srcMu  sync.Mutex
	src    Source

	start    time.Time
	deadline time.Time // zero: no time limit
	claimed  atomic.Int64
	answered atomic.Int64
	workers  []*workerStats
}

// Run sends load to cfg.Server until cfg.Duration has passed or
// cfg.Requests were sent, or ctx ends (then the report covers what was done
// and has Interrupted set). Errors are for a bad config or target; failed
// requests are counted in the report.
func Run(ctx context.Context, cfg Config, src Source) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if _, err := CheckTarget(cfg.Server, cfg.AllowRemote); err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, src: src, client: newClient(cfg.Connections, cfg.Timeout, cfg.AllowRemote)}
	defer r.client.CloseIdleConnections()

	var rowsBefore float64
	var lagErr string
	lag := cfg.Lag
	if lag {
		if rowsBefore, err = scrapeCounter(ctx, r.client, cfg.Server, metricRowsInserted); err != nil {
			lag, lagErr = false, "not measured: "+err.Error()
		}
	}

	r.start = time.Now()
	if cfg.Duration > 0 {
		r.deadline = r.start.Add(cfg.Duration)
	}
	var ticks chan time.Time
	var wg sync.WaitGroup
	if cfg.Rate > 0 {
		ticks = make(chan time.Time, cfg.Connections)
		wg.Go(func() { r.schedule(ctx, ticks) })
	}
	var workers sync.WaitGroup
	for range cfg.Connections {
		w := &workerStats{status: make(map[int]int64), errs: make(map[string]int64)}
		r.workers = append(r.workers, w)
		workers.Go(func() { r.work(ctx, w, ticks) })
	}
	progressDone := make(chan struct{})
	if cfg.Progress != nil {
		wg.Go(func() { r.progress(progressDone) })
	}
	workers.Wait()
	end := time.Now()
	close(progressDone)
	wg.Wait()

	rep := r.report(end.Sub(r.start))
	rep.Interrupted = ctx.Err() != nil
	rep.LagError = lagErr
	if lag && !rep.Interrupted {
		rep.Lag = r.waitInserted(ctx, rowsBefore, rep.Events, end)
	}
	return rep, nil
}

// schedule issues the open-loop send times: request i is due at
// start + i/rate. When every worker is busy the channel blocks the
// scheduler, but each time sent is still the one it was due at, so the
// wait shows in the latency.
func (r *run) schedule(ctx context.Context, ticks chan<- time.Time) {
	defer close(ticks)
	interval := float64(time.Second) / r.cfg.Rate
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for i := int64(0); ; i++ {
		if r.cfg.Requests > 0 && i >= r.cfg.Requests {
			return
		}
		due := r.start.Add(time.Duration(float64(i) * interval))
		if !r.deadline.IsZero() && !due.Before(r.deadline) {
			return
		}
		if wait := time.Until(due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		select {
		case ticks <- due:
		case <-ctx.Done():
			return
		}
	}
}

// next claims the right to send one more request in closed loop.
func (r *run) next(ctx context.Context) bool {
	if ctx.Err() != nil || (!r.deadline.IsZero() && !time.Now().Before(r.deadline)) {
		return false
	}
	return r.cfg.Requests == 0 || r.claimed.Add(1) <= r.cfg.Requests
}

// hits takes n hits from the source, transport forced per the endpoint.
func (r *run) hits(buf []Hit, n int) []Hit {
	buf = buf[:0]
	r.srcMu.Lock()
	for range n {
		buf = append(buf, r.src.Next())
	}
	r.srcMu.Unlock()
	for i := range buf {
		switch r.cfg.Endpoint {
		case EndpointPixel:
			buf[i].Beacon = false
		case EndpointBeacon:
			buf[i].Beacon = true
		}
	}
	return buf
}

func (r *run) work(ctx context.Context, w *workerStats, ticks <-chan time.Time) {
	per := 1
	if r.cfg.Endpoint == EndpointBatch {
		per = r.cfg.Batch
	}
	buf := make([]Hit, 0, per)
	for {
		var sched time.Time
		if ticks != nil {
			t, ok := <-ticks
			if !ok || ctx.Err() != nil {
				return
			}
			sched = t
		} else if !r.next(ctx) {
			return
		}
		buf = r.hits(buf, per)
		var req *http.Request
		var err error
		if r.cfg.Endpoint == EndpointBatch {
			req, err = BatchRequest(r.cfg.Server, buf)
		} else {
			req, err = buf[0].Request(r.cfg.Server)
		}
		if err != nil {
			w.mu.Lock()
			w.errs["bad request: "+err.Error()]++
			w.mu.Unlock()
			continue
		}
		if sched.IsZero() {
			sched = time.Now()
		}
		resp, err := r.client.Do(req.WithContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return // interrupted: not the server's failure
			}
			w.mu.Lock()
			w.errs[transportErrorKind(err)]++
			w.mu.Unlock()
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat := time.Since(sched)
		w.mu.Lock()
		w.hist.Record(lat)
		w.status[resp.StatusCode]++
		if resp.StatusCode/100 == 2 {
			for i := range buf {
				w.tally.Add(&buf[i])
			}
			w.events += int64(len(buf))
		}
		w.mu.Unlock()
		r.answered.Add(1)
	}
}

// merged is every worker's results so far.
func (r *run) merged() (h Histogram, status map[int]int64, errs map[string]int64, tally Tally, events int64) {
	status, errs = make(map[int]int64), make(map[string]int64)
	for _, w := range r.workers {
		w.mu.Lock()
		h.Merge(&w.hist)
		for k, v := range w.status {
			status[k] += v
		}
		for k, v := range w.errs {
			errs[k] += v
		}
		tally.Merge(&w.tally)
		events += w.events
		w.mu.Unlock()
	}
	return h, status, errs, tally, events
}

// progress prints one line a second until done is closed.
func (r *run) progress(done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var last int64
	lastAt := r.start
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			n := r.answered.Load()
			h, status, errs, _, _ := r.merged()
			var failed int64
			for code, c := range status {
				if code/100 != 2 {
					failed += c
				}
			}
			for _, c := range errs {
				failed += c
			}
			rate := float64(n-last) / now.Sub(lastAt).Seconds()
			fmt.Fprintf(r.cfg.Progress, "%6.1fs  requests %9d  %8.0f req/s  p99 %8s  errors %d\n",
				now.Sub(r.start).Seconds(), n, rate, fmtDur(h.Quantile(0.99)), failed)
			last, lastAt = n, now
		}
	}
}

// waitInserted polls /metrics until the server has inserted want more rows
// than before, and reports how long after the last answer that was.
func (r *run) waitInserted(ctx context.Context, before float64, want int64, lastSend time.Time) *Lag {
	l := &Lag{Want: want}
	deadline := time.Now().Add(r.cfg.LagTimeout)
	for {
		v, err := scrapeCounter(ctx, r.client, r.cfg.Server, metricRowsInserted)
		if err == nil {
			l.Rows = int64(v - before)
			if l.Rows >= want {
				l.Reached = true
				l.Seconds = time.Since(lastSend).Seconds()
				return l
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			l.Seconds = time.Since(lastSend).Seconds()
			return l
		}
		select {
		case <-time.After(20 * time.Millisecond):
		case <-ctx.Done():
		}
	}
}
