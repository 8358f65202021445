package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// What loadgen reads from the server's /metrics (unlabelled series only).
const (
	// metricRowsInserted reaches the number of events sent once every one
	// of them is in views_raw.
	metricRowsInserted = "viewcount_rows_inserted_total"
	metricRSS          = "process_resident_memory_bytes"
	metricHeapInuse    = "go_memstats_heap_inuse_bytes"
)

// serverMetrics is one scrape; a series the server does not export has its
// has* false (the memory gauges are optional).
type serverMetrics struct {
	rows, rss, heap          float64
	hasRows, hasRSS, hasHeap bool
}

// scrapeMetrics reads the series loadgen uses from the server's /metrics.
func scrapeMetrics(ctx context.Context, client *http.Client, server string) (serverMetrics, error) {
	var m serverMetrics
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(server, "/")+"/metrics", nil)
	if err != nil {
		return m, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return m, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return m, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		var v *float64
		var has *bool
		switch name, _, _ := bytes.Cut(line, []byte(" ")); string(name) {
		case metricRowsInserted:
			v, has = &m.rows, &m.hasRows
		case metricRSS:
			v, has = &m.rss, &m.hasRSS
		case metricHeapInuse:
			v, has = &m.heap, &m.hasHeap
		default:
			continue
		}
		// "name value [timestamp]"
		f := bytes.Fields(line)
		if len(f) < 2 {
			continue
		}
		if x, err := strconv.ParseFloat(string(f[1]), 64); err == nil {
			*v, *has = x, true
		}
	}
	if err := sc.Err(); err != nil {
		return m, fmt.Errorf("GET /metrics: %w", err)
	}
	return m, nil
}

// Sampling during a run: every lagEvery while the lag is measured (the lag
// series), else every second (memory for the progress lines). Samples in
// the first lagWarmup are left out of the lag series: the pipeline's first
// batches and the client's connection set-up are not its steady state.
const (
	lagEvery    = 100 * time.Millisecond
	lagWarmup   = time.Second
	sampleEvery = time.Second
)

// lagSample is one look at the pipeline during a run: At after the start,
// Answered events had been acknowledged (2xx) and Inserted rows had been
// inserted since the run started.
type lagSample struct {
	At                 time.Duration
	Answered, Inserted int64
}

// lagSeries is the pipeline lag at each sample from warmup on: how long
// before the sample the acknowledged count reached the inserted count,
// which is the age of the newest inserted event when events are inserted in
// the order they were acknowledged (a few stragglers, such as views held by
// settling, do not hold it up). The acknowledged count between samples is
// interpolated linearly from zero at the start. When every acknowledged
// event is inserted nothing waits and the lag is zero, even if the sender
// has been idle; samples before the first acknowledgement are skipped.
// samples must be in time order (Answered then never decreases).
func lagSeries(samples []lagSample, warmup time.Duration) []time.Duration {
	var lags []time.Duration
	for j, s := range samples {
		if s.At < warmup || s.Answered <= 0 {
			continue
		}
		lags = append(lags, lagAt(samples[:j+1]))
	}
	return lags
}

// lagAt is the lag at the last of samples (see lagSeries).
func lagAt(samples []lagSample) time.Duration {
	s := samples[len(samples)-1]
	if s.Inserted >= s.Answered {
		return 0
	}
	return s.At - reachedAt(samples, max(s.Inserted, 0))
}

// reachedAt is when the acknowledged count, linear between samples from
// (0, 0), first reached n; n must be at most the last sample's count.
func reachedAt(samples []lagSample, n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	i := sort.Search(len(samples), func(i int) bool { return samples[i].Answered >= n })
	var t0 time.Duration
	var a0 int64
	if i > 0 {
		t0, a0 = samples[i-1].At, samples[i-1].Answered
	}
	s := samples[i]
	return t0 + time.Duration(float64(s.At-t0)*float64(n-a0)/float64(s.Answered-a0))
}

// monitor samples the server's /metrics while a run sends. Its owner (Run)
// starts it with go m.run(done) and closes done to stop it.
type monitor struct {
	client *http.Client
	server string
	start  time.Time
	lag    bool  // record the lag series
	before int64 // rows inserted before the run
	events func() int64

	mu      sync.Mutex
	samples []lagSample
	last    serverMetrics // the latest successful scrape
	mem     Memory
	errors  int
}

func (m *monitor) run(ctx context.Context, done <-chan struct{}) {
	every := sampleEvery
	if m.lag {
		every = lagEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			m.sample(ctx)
		}
	}
}

// sample scrapes once and records what it read.
func (m *monitor) sample(ctx context.Context) {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	sm, err := scrapeMetrics(sctx, m.client, m.server)
	at, answered := time.Since(m.start), m.events()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err != nil {
		m.errors++
		return
	}
	m.last = sm
	m.mem.observe(sm, false)
	if m.lag && sm.hasRows {
		m.samples = append(m.samples, lagSample{At: at, Answered: answered, Inserted: int64(sm.rows) - m.before})
	}
}

// latest is the last scrape and the lag at the last sample (-1: none), for
// the progress lines.
func (m *monitor) latest() (serverMetrics, time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	lag := time.Duration(-1)
	if n := len(m.samples); n > 0 && m.samples[n-1].Answered > 0 {
		lag = lagAt(m.samples)
	}
	return m.last, lag
}

// series summarises the lag samples (nil when the lag was not sampled).
func (m *monitor) series() *LagSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.lag {
		return nil
	}
	ls := &LagSeries{IntervalSeconds: lagEvery.Seconds(), WarmupSeconds: lagWarmup.Seconds(), ScrapeErrors: m.errors}
	lags := lagSeries(m.samples, lagWarmup)
	if len(lags) == 0 {
		return ls
	}
	slices.Sort(lags)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(lags)))) - 1 // rank ⌈q·n⌉, as Histogram
		return lags[min(max(i, 0), len(lags)-1)].Seconds()
	}
	ls.Samples, ls.P50, ls.P99, ls.Max = len(lags), at(0.5), at(0.99), lags[len(lags)-1].Seconds()
	return ls
}

// observe records memory gauges of one scrape: as the start values when
// first, always as the end values, and in the peaks.
func (mem *Memory) observe(sm serverMetrics, first bool) {
	if sm.hasRSS {
		v := int64(sm.rss)
		if first {
			mem.RSSStart = v
		}
		mem.RSSEnd, mem.RSSPeak = v, max(mem.RSSPeak, v)
	}
	if sm.hasHeap {
		v := int64(sm.heap)
		if first {
			mem.HeapStart = v
		}
		mem.HeapEnd, mem.HeapPeak = v, max(mem.HeapPeak, v)
	}
}
