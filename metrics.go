package viewcount

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Metrics are the process's counters, shared by the roles running in it and
// served as Prometheus text on /metrics. The counters and gauges are
// hand-written: each update on the hot path is one atomic add, each is one
// line of text, and this package imports nothing but the standard library.
// The latency and lag histograms are the Prometheus client library's, kept
// behind Latency (internal/latency says why), and written after these.
type Metrics struct {
	Received      atomic.Uint64 // events decoded from HTTP requests
	BadRequests   atomic.Uint64 // requests answered 400/413/415
	RateLimited   atomic.Uint64 // requests answered 429: their client address was over its rate
	Published     atomic.Uint64 // events acknowledged by JetStream
	PublishErrors atomic.Uint64 // events answered 503
	Messages      atomic.Uint64 // JetStream messages published (group commits)

	// validated counts verdicts by index into reasons (Reasons): sized by
	// the list itself, so a reason added there has its counter.
	validated [len(reasons)]atomic.Uint64

	Inserted     atomic.Uint64 // rows inserted into views_raw
	InsertErrors atomic.Uint64 // failed insert attempts (retried)
	Fed          atomic.Uint64 // rows fed from views_raw to the rollups
	FeedErrors   atomic.Uint64 // failed feed attempts (retried)
	lagMillis    atomic.Int64  // age of the oldest event the validators read and have not counted yet

	partMu sync.Mutex
	parts  map[int]PartitionState // the validators' state, by partition this process owns

	// Health is each part's state for /readyz and the viewcount_healthy
	// gauges: Metrics is what every role already holds.
	Health

	latency Latency // nil: no histograms (NewMetrics)

	memMu    sync.Mutex
	memParts []MemoryPart
}

// MemoryPart is one part of the process's memory budget (--memory-budget;
// docs/operations.md, "Memory budget"): what it may hold and, when it can
// be measured, what it holds now.
type MemoryPart struct {
	Name   string
	Budget int64
	Used   func() int64 // nil: not measured
}

// SetMemoryParts sets the parts /metrics reports as
// viewcount_memory_budget_bytes and viewcount_memory_used_bytes. Used is
// called on every scrape and must be cheap.
func (m *Metrics) SetMemoryParts(parts []MemoryPart) {
	m.memMu.Lock()
	defer m.memMu.Unlock()
	m.memParts = parts
}

// ValidatorBytes estimates what this process's validators hold, over their
// partitions (PartitionState.Bytes).
func (m *Metrics) ValidatorBytes() int64 {
	ps, _ := m.partitionTotals()
	return ps.Bytes
}

// Latency keeps the distributions of how long the pipeline's steps take and
// how far counting trails (docs/operations.md, "Latency and lag
// histograms"); *latency.Histograms (internal/latency) is the one the
// service runs. Every method is called on a hot path (Request on every HTTP
// request, the pixel's included) and must be safe for concurrent use,
// cheap and free of allocations. WriteTo writes the histograms in the
// Prometheus text exposition format, with no family Metrics writes itself.
type Latency interface {
	Request(route string, status int, d time.Duration)
	IngestAck(d time.Duration)
	Insert(d time.Duration)
	Feed(d time.Duration)
	FeedLag(d time.Duration)
	ValidationLag(d time.Duration)
	io.WriterTo
}

// PartitionState is how full one partition's validator is: its bounded
// structures, for capacity planning (memory grows until the windows reach
// their cap, then stays flat).
type PartitionState struct {
	RetryKeys, ViewKeys int    // keys in the duplicate-id and duplicate-view windows
	RotationNetworks    int    // networks tracked by the rotation rule
	RotationUntracked   uint64 // views of busy networks that found the rotation rule full
	Held                int    // valid views held by settling
	// Bytes estimates what the partition's validator holds: its rules'
	// tables and sketches (judge.Stats.Bytes) and its held views.
	Bytes int64
}

// SetPartitionState records the state of partition p's validator.
func (m *Metrics) SetPartitionState(p int, s PartitionState) {
	m.partMu.Lock()
	defer m.partMu.Unlock()
	if m.parts == nil {
		m.parts = make(map[int]PartitionState)
	}
	m.parts[p] = s
}

// DropPartition forgets partition p's state when its validator stops here.
func (m *Metrics) DropPartition(p int) {
	m.partMu.Lock()
	defer m.partMu.Unlock()
	delete(m.parts, p)
}

func (m *Metrics) partitionTotals() (sum PartitionState, owned int) {
	m.partMu.Lock()
	defer m.partMu.Unlock()
	for _, s := range m.parts {
		sum.RetryKeys += s.RetryKeys
		sum.ViewKeys += s.ViewKeys
		sum.RotationNetworks += s.RotationNetworks
		sum.RotationUntracked += s.RotationUntracked
		sum.Held += s.Held
		sum.Bytes += s.Bytes
	}
	return sum, len(m.parts)
}

// NewMetrics returns zeroed metrics without histograms: what the
// observations below are given is dropped.
func NewMetrics() *Metrics { return &Metrics{} }

// NewMetricsWith returns zeroed metrics that record their observations in
// l and serve its histograms after their own counters.
func NewMetricsWith(l Latency) *Metrics { return &Metrics{latency: l} }

// ObserveRequest records an HTTP request answered with status after d:
// route is the matched route's template, never the request's path (every
// distinct value is a series), and "" when no route matched.
func (m *Metrics) ObserveRequest(route string, status int, d time.Duration) {
	if m.latency != nil {
		m.latency.Request(route, status, d)
	}
}

// ObserveIngestAck records how long a request's events waited, once
// handed to the publisher, for JetStream's ack of all of them.
func (m *Metrics) ObserveIngestAck(d time.Duration) {
	if m.latency != nil {
		m.latency.IngestAck(d)
	}
}

// ObserveInsert records one successful insert of a batch into views_raw.
func (m *Metrics) ObserveInsert(d time.Duration) {
	if m.latency != nil {
		m.latency.Insert(d)
	}
}

// ObserveFeed records one successful feed's copy into the rollups.
func (m *Metrics) ObserveFeed(d time.Duration) {
	if m.latency != nil {
		m.latency.Feed(d)
	}
}

// ObserveFeedLag records, for a feed that ended, how long its rows had
// been stored: since the insert of its first batch.
func (m *Metrics) ObserveFeedLag(d time.Duration) {
	if m.latency != nil {
		m.latency.FeedLag(d)
	}
}

// ObserveValidationLag records, for a batch whose feed ended, the age of
// its oldest event: receipt to counted.
func (m *Metrics) ObserveValidationLag(d time.Duration) {
	if m.latency != nil {
		m.latency.ValidationLag(d)
	}
}

// Validated counts one verdict; a reason not in Reasons is not counted.
// It reads the unexported array, not the exported slice, so nothing a
// caller does to Reasons can put an index beyond the counters.
func (m *Metrics) Validated(r Reason) {
	for i, x := range &reasons {
		if x == r {
			m.validated[i].Add(1)
			return
		}
	}
}

// SetPipelineLag records how far counting is behind, as this process's
// validators see it once a second: the age of the oldest event they have
// read and not yet counted (in a batch, not yet fed to the rollups, or held
// for settling), 0 when there is none. What a site waits for, the stream's
// unread backlog included, is the api's per-site lag (api.Snapshot.Lag).
func (m *Metrics) SetPipelineLag(ms int64) { m.lagMillis.Store(ms) }

// PipelineLag is the last value SetPipelineLag recorded (0 at rest, and in
// a process that runs no validator).
func (m *Metrics) PipelineLag() time.Duration {
	return time.Duration(m.lagMillis.Load()) * time.Millisecond
}

// WriteTo writes the metrics in the Prometheus text exposition format.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	var n int64
	p := func(format string, a ...any) {
		k, _ := fmt.Fprintf(w, format, a...)
		n += int64(k)
	}
	counter := func(name, help string, v uint64) {
		p("# HELP %s %s\n# TYPE %s counter\n%s %d\n", name, help, name, name, v)
	}
	counter("viewcount_events_received_total", "Events decoded from HTTP requests.", m.Received.Load())
	counter("viewcount_bad_requests_total", "Requests rejected as unparseable (400/413/415).", m.BadRequests.Load())
	counter("viewcount_rate_limited_total", "Requests refused (429) because their client address was over its rate.", m.RateLimited.Load())
	counter("viewcount_events_published_total", "Events made durable in JetStream.", m.Published.Load())
	counter("viewcount_publish_errors_total", "Events that could not be made durable (503).", m.PublishErrors.Load())
	counter("viewcount_stream_messages_total", "JetStream messages published (each a group commit).", m.Messages.Load())
	p("# HELP viewcount_events_validated_total Events validated, by verdict.\n# TYPE viewcount_events_validated_total counter\n")
	for i, r := range &reasons {
		p("viewcount_events_validated_total{verdict=%q} %d\n", r, m.validated[i].Load())
	}
	counter("viewcount_rows_inserted_total", "Rows inserted into views_raw.", m.Inserted.Load())
	counter("viewcount_insert_errors_total", "Failed insert attempts (each retried).", m.InsertErrors.Load())
	counter("viewcount_rows_fed_total", "Rows fed from views_raw to the rollups.", m.Fed.Load())
	counter("viewcount_feed_errors_total", "Failed rollup feed attempts (each retried).", m.FeedErrors.Load())
	lag := float64(m.lagMillis.Load()) / 1000
	p("# HELP viewcount_pipeline_lag_seconds Age of the oldest event this process's validators read and have not counted yet (held for settling included); 0 when none.\n# TYPE viewcount_pipeline_lag_seconds gauge\nviewcount_pipeline_lag_seconds %g\n", lag)

	gauge := func(name, help string, v uint64) {
		p("# HELP %s %s\n# TYPE %s gauge\n%s %d\n", name, help, name, name, v)
	}
	ps, owned := m.partitionTotals()
	gauge("viewcount_validator_partitions", "Partitions this process validates.", uint64(owned))
	p("# HELP viewcount_validator_window_keys Keys remembered by the duplicate windows, over this process's partitions (each window is capped per partition).\n# TYPE viewcount_validator_window_keys gauge\n")
	p("viewcount_validator_window_keys{window=\"retry\"} %d\nviewcount_validator_window_keys{window=\"views\"} %d\n", ps.RetryKeys, ps.ViewKeys)
	gauge("viewcount_validator_rotation_networks", "Networks the rotation rule tracks.", uint64(ps.RotationNetworks))
	gauge("viewcount_validator_held_views", "Valid views held by settling, not yet written.", uint64(ps.Held))
	counter("viewcount_validator_rotation_untracked_total", "Views of busy networks that found the rotation rule full (since each validator started).", ps.RotationUntracked)
	// runtime/metrics rather than runtime.ReadMemStats: reading it does
	// not stop the world, so scraping under load costs the load nothing.
	rt := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}}
	metrics.Read(rt)
	gauge("go_memstats_heap_inuse_bytes", "Go heap bytes in live and not yet swept objects.", sampleUint(rt[0]))
	gauge("go_memstats_sys_bytes", "Bytes of memory the Go runtime mapped.", sampleUint(rt[1]))
	gauge("go_goroutines", "Goroutines that currently exist.", uint64(runtime.NumGoroutine()))
	if rss, ok := ResidentBytes(); ok {
		gauge("process_resident_memory_bytes", "Resident set size of the process (Go heap, chDB and the embedded NATS server together).", rss)
	}
	m.writeMemory(p)
	k, err := m.writeHealth(w)
	n += k
	if err != nil || m.latency == nil {
		return n, err
	}
	k, err = m.latency.WriteTo(w)
	return n + k, err
}

func (m *Metrics) writeMemory(p func(string, ...any)) {
	m.memMu.Lock()
	parts := m.memParts
	m.memMu.Unlock()
	if len(parts) == 0 {
		return
	}
	p("# HELP viewcount_memory_budget_bytes What each part of the process's memory budget may hold (--memory-budget); part=\"total\" is the budget.\n# TYPE viewcount_memory_budget_bytes gauge\n")
	for _, pt := range parts {
		p("viewcount_memory_budget_bytes{part=%q} %d\n", pt.Name, pt.Budget)
	}
	p("# HELP viewcount_memory_used_bytes What each part of the process's memory budget holds now (part=\"total\": the resident set).\n# TYPE viewcount_memory_used_bytes gauge\n")
	for _, pt := range parts {
		if pt.Used != nil {
			p("viewcount_memory_used_bytes{part=%q} %d\n", pt.Name, pt.Used())
		}
	}
}

func sampleUint(s metrics.Sample) uint64 {
	if s.Value.Kind() == metrics.KindUint64 {
		return s.Value.Uint64()
	}
	return 0
}

// ResidentBytes reads the process's RSS from /proc (Linux only: elsewhere
// the gauge is left out, and ok is false).
func ResidentBytes() (rss uint64, ok bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}
