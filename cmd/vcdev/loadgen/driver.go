package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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
	// EndpointCount reads public counts, GET /v1/sites/{site}/count?page=P,
	// pages as popular as the traffic model views them (Source.NextRead):
	// a 200 is a success; no events are sent, so none are tallied and no
	// lag is measured.
	EndpointCount Endpoint = "count"
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
	Timeout  time.Duration // per request, from writing it to the end of the answer; default 30s
	// AllowRemote permits a server that is not on a loopback address.
	AllowRemote bool
	// Lag: while sending, sample the server's /metrics every 100 ms for
	// the pipeline lag series (Report.LagSeries); after sending, poll it
	// until viewcount_rows_inserted_total has grown by the events
	// acknowledged, at most LagTimeout (default 60s). Not for the count
	// endpoint.
	Lag        bool
	LagTimeout time.Duration
	Progress   io.Writer // one line a second while running; nil: quiet
	// Window, with Progress: also a line per Window with that window's
	// own latency quantiles (the per-second lines' p99 is the run's so
	// far) and the server's memory, for a long run's stability.
	Window time.Duration
}

func (c Config) withDefaults() (Config, error) {
	if c.Server == "" {
		c.Server = "http://127.0.0.1:8080"
	}
	switch c.Endpoint {
	case "":
		c.Endpoint = EndpointPixel
	case EndpointPixel, EndpointBeacon, EndpointBatch, EndpointMix, EndpointCount:
	default:
		return c, fmt.Errorf("loadgen: endpoint %q: want pixel, beacon, batch, mix or count", c.Endpoint)
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

// Source supplies hits, and public-count reads for the count endpoint;
// *Generator is one. Run serialises calls.
type Source interface {
	Next() Hit
	NextRead() (site, page string)
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
	target target
	client *http.Client // /metrics, and the workers' requests to an https target
	srcMu  sync.Mutex
	src    Source
	mon    *monitor // nil: the server has no /metrics

	start    time.Time
	deadline time.Time // zero: no time limit
	claimed  atomic.Int64
	answered atomic.Int64
	events   atomic.Int64 // events in 2xx answers, for the lag series
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
	u, err := CheckTarget(cfg.Server, cfg.AllowRemote)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, src: src, target: parseTarget(u), client: newClient(cfg.Connections+1, cfg.Timeout, cfg.AllowRemote)}
	defer r.client.CloseIdleConnections()

	// One scrape before sending: the inserted-rows counter to count from
	// and the memory at the start. A server without /metrics (the
	// baseline) is simply not sampled.
	lag := cfg.Lag && cfg.Endpoint != EndpointCount
	var lagErr string
	sm, err := scrapeMetrics(ctx, r.client, cfg.Server)
	switch {
	case err != nil && lag:
		lag, lagErr = false, "not measured: "+err.Error()
	case err == nil && lag && !sm.hasRows:
		lag, lagErr = false, "not measured: GET /metrics: no "+metricRowsInserted
	}
	if err == nil {
		r.mon = &monitor{client: r.client, server: cfg.Server, lag: lag, before: int64(sm.rows), events: r.events.Load}
		r.mon.mem.observe(sm, true)
	}

	r.start = time.Now()
	if r.mon != nil {
		r.mon.start = r.start
	}
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
	done := make(chan struct{})
	if r.mon != nil {
		wg.Go(func() { r.mon.run(ctx, done) })
	}
	if cfg.Progress != nil {
		wg.Go(func() { r.progress(done) })
	}
	workers.Wait()
	end := time.Now()
	close(done)
	wg.Wait()

	rep := r.report(end.Sub(r.start))
	rep.Interrupted = ctx.Err() != nil
	rep.LagError = lagErr
	if r.mon != nil {
		// The end of sending, even when interrupted (then briefly).
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		if sm, err := scrapeMetrics(sctx, r.client, cfg.Server); err == nil {
			r.mon.mem.observe(sm, false)
		}
		cancel()
		rep.LagSeries = r.mon.series()
		if r.mon.mem != (Memory{}) {
			mem := r.mon.mem
			rep.Memory = &mem
		}
	}
	if lag && !rep.Interrupted {
		rep.Lag = r.waitInserted(ctx, r.mon.before, rep.Events, end)
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

// newConn is a worker's connection to the server.
func (r *run) newConn(ctx context.Context) roundTripper {
	if r.target.https {
		return &httpsConn{ctx: ctx, client: r.client, host: r.target.host}
	}
	return newRawConn(ctx, r.target.addr, r.cfg.Timeout, r.cfg.AllowRemote)
}

// request takes the next request's hits from the source into buf and
// writes it: the request, valid until w is used again, and its hits (none
// for a count read).
func (r *run) request(w *requestWriter, buf []Hit) ([]Hit, []byte, error) {
	switch r.cfg.Endpoint {
	case EndpointCount:
		r.srcMu.Lock()
		site, page := r.src.NextRead()
		r.srcMu.Unlock()
		return buf[:0], w.count(site, page), nil
	case EndpointBatch:
		buf = r.hits(buf, r.cfg.Batch)
		req, err := w.batch(buf)
		return buf, req, err
	}
	buf = r.hits(buf, 1)
	if buf[0].Beacon {
		req, err := w.beacon(&buf[0])
		return buf, req, err
	}
	req, err := w.pixel(&buf[0])
	return buf, req, err
}

func (r *run) work(ctx context.Context, w *workerStats, ticks <-chan time.Time) {
	conn := r.newConn(ctx)
	defer conn.close()
	rw := newRequestWriter(r.target.host, r.target.prefix)
	buf := make([]Hit, 0, r.cfg.Batch)
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
		var req []byte
		var err error
		buf, req, err = r.request(rw, buf)
		if err != nil {
			w.mu.Lock()
			w.errs["bad request: "+err.Error()]++
			w.mu.Unlock()
			continue
		}
		if sched.IsZero() {
			sched = time.Now()
		}
		status, err := conn.roundTrip(req)
		if err != nil {
			if ctx.Err() != nil {
				return // interrupted: not the server's failure
			}
			w.mu.Lock()
			w.errs[transportErrorKind(err)]++
			w.mu.Unlock()
			continue
		}
		lat := time.Since(sched)
		w.mu.Lock()
		w.hist.Record(lat)
		w.status[status]++
		if status/100 == 2 && len(buf) > 0 {
			for i := range buf {
				w.tally.Add(&buf[i])
			}
			w.events += int64(len(buf))
			r.events.Add(int64(len(buf)))
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
	var winStart Histogram // the run's histogram when the window began
	winAt := r.start
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
			line := fmt.Sprintf("%6.1fs  requests %9d  %8.0f req/s  p99 %8s  errors %d",
				now.Sub(r.start).Seconds(), n, rate, fmtDur(h.Quantile(0.99)), failed)
			if r.mon != nil {
				sm, lag := r.mon.latest()
				if lag >= 0 {
					line += "  lag " + fmtDur(lag)
				}
				if sm.hasRSS {
					line += "  rss " + fmtBytes(int64(sm.rss))
				}
				if sm.hasHeap {
					line += "  heap " + fmtBytes(int64(sm.heap))
				}
			}
			fmt.Fprintln(r.cfg.Progress, line)
			last, lastAt = n, now
			if r.cfg.Window > 0 && now.Sub(winAt) >= r.cfg.Window {
				w := h.Since(&winStart)
				line := fmt.Sprintf("window %6.0fs-%.0fs  requests %9d  p50 %s  p99 %s  p99.9 %s  max %s",
					winAt.Sub(r.start).Seconds(), now.Sub(r.start).Seconds(), w.Count(),
					fmtDur(w.Quantile(0.5)), fmtDur(w.Quantile(0.99)), fmtDur(w.Quantile(0.999)), fmtDur(w.Max()))
				if r.mon != nil {
					if sm, _ := r.mon.latest(); sm.hasRSS {
						line += "  rss " + fmtBytes(int64(sm.rss))
					}
				}
				fmt.Fprintln(r.cfg.Progress, line)
				winStart, winAt = h, now
			}
		}
	}
}

// fmtBytes prints a size in MiB.
func fmtBytes(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// waitInserted polls /metrics until the server has inserted want more rows
// than before, and reports how long after the last answer that was.
func (r *run) waitInserted(ctx context.Context, before, want int64, lastSend time.Time) *Lag {
	l := &Lag{Want: want}
	deadline := time.Now().Add(r.cfg.LagTimeout)
	for {
		sm, err := scrapeMetrics(ctx, r.client, r.cfg.Server)
		if err == nil && sm.hasRows {
			l.Rows = int64(sm.rows) - before
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
