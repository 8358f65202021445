// Package latency keeps the service's latency and lag distributions as
// Prometheus histograms: HTTP requests by route and status class, the wait
// for JetStream's ack, the store's inserts and feeds, how long stored rows
// wait for the rollups and how old events are when they are counted
// (docs/operations.md, "Latency and lag histograms", says what each one
// measures and why its buckets are where they are). *Histograms is the
// viewcount.Latency that viewcount.Metrics forwards to and whose exposition
// it appends to its own on /metrics.
//
// The histograms come from the Prometheus client library (client_golang)
// rather than being written by hand like the counters in package viewcount:
// a histogram's exposition is where hand-written text goes wrong
// (cumulative buckets, the +Inf bucket, _sum and _count, label escaping,
// one HELP and TYPE per family), and an observation costs three atomic
// operations and no allocation, as much as the counters' one atomic add
// (BenchmarkRequest; BenchmarkPixel measures it on the pixel). The counters
// and gauges stay hand-written: each is one atomic or a value read at
// scrape time, their text is one line each, moving them would change
// nothing their readers see, and the root package they live in imports
// nothing but the standard library. The registry here is this package's
// own, never the library's global one, and holds no Go or process
// collector: viewcount.Metrics writes those names itself, and
// TestExpositionHasNoDuplicates (package viewcount) fails if a family is
// ever written twice.
//
// It must never let a label take unbounded values: a route is the router's
// template (Gin's FullPath), never the request's path, and every request
// no route matched shares one value, so the series are at most the routes
// times five status classes.
package latency

import (
	"fmt"
	"io"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Metric names, exported for the tests and the dashboards' tests.
const (
	RequestName       = "viewcount_http_request_duration_seconds"
	IngestAckName     = "viewcount_ingest_ack_duration_seconds"
	InsertName        = "viewcount_insert_duration_seconds"
	FeedName          = "viewcount_feed_duration_seconds"
	FeedLagName       = "viewcount_feed_lag_seconds"
	ValidationLagName = "viewcount_validation_lag_seconds"
)

// Unmatched is the route label of a request no route matched (a 404, a
// 405): one value for all of them, whatever their paths.
const Unmatched = "unmatched"

// The buckets, in seconds, chosen per quantity (docs/operations.md lists
// them with what they cover).
var (
	// requestBuckets: a pixel answers in tens of microseconds plus the
	// ack's fraction of a millisecond; the stats API and analysts' SQL take
	// up to seconds, and a hit that cannot be stored waits for ingest's
	// publish timeout (5 s) before its 503.
	requestBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// ackBuckets: the embedded server acks in a fraction of a millisecond,
	// group commit lingers up to 2 ms, a cluster adds its round trips, and
	// an ack never waits past 10 s.
	ackBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	// storeBuckets: an insert of a few rows takes about 10 ms, one of 50k
	// rows a second or more; a feed costs ~150 ms whatever its rows and
	// seconds at 200k.
	storeBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	// lagBuckets: counting trails by --flush-every (1 s) plus --feed-every
	// (3 s) at rest, more under load or with --settle-window; readiness
	// fails beyond --ready-max-lag (2 min), which the last buckets reach.
	lagBuckets = []float64{0.1, 0.25, 0.5, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 30, 60, 120, 300}
)

// statusClasses label a status code by its hundreds; codes outside
// 100–599 (which nothing here answers) count as 5xx.
var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// Histograms are the process's latency and lag histograms. The zero value
// is not usable: New.
type Histograms struct {
	reg                                             *prometheus.Registry
	requests                                        *prometheus.HistogramVec
	ingestAck, insert, feed, feedLag, validationLag prometheus.Histogram
	mu                                              sync.Mutex // serialises adding a route's child
	routes                                          atomic.Pointer[map[string]*routeChildren]
}

// routeChildren are one route's histograms by status class, each created
// on its first request so a route shows only the classes it answered.
type routeChildren [len(statusClasses)]atomic.Pointer[child]

type child struct{ prometheus.Observer }

// New returns the histograms, each registered and empty.
func New() *Histograms {
	h := &Histograms{reg: prometheus.NewRegistry()}
	h.requests = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    RequestName,
		Help:    "Time from routing an HTTP request to its handler's return, by route template (\"" + Unmatched + "\" when none matched) and status class.",
		Buckets: requestBuckets,
	}, []string{"route", "status"})
	one := func(name, help string, buckets []float64) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	}
	h.ingestAck = one(IngestAckName, "Time from handing a request's events to the group-commit publisher to JetStream's ack of the last of their messages (acknowledged requests only).", ackBuckets)
	h.insert = one(InsertName, "Time of one successful insert of a batch into views_raw.", storeBuckets)
	h.feed = one(FeedName, "Time of one successful rollup feed: the copy into views_feed (the materialized views running on it) and its done record.", storeBuckets)
	h.feedLag = one(FeedLagName, "For each feed, how long its rows had waited in views_raw: from the insert of its first batch to the end of the feed.", lagBuckets)
	h.validationLag = one(ValidationLagName, "For each batch when its feed ends, the age of its oldest event: from receipt by ingest to counted in the rollups (held for settling included).", lagBuckets)
	h.reg.MustRegister(h.requests, h.ingestAck, h.insert, h.feed, h.feedLag, h.validationLag)
	h.routes.Store(&map[string]*routeChildren{})
	return h
}

// Request records one HTTP request: route is its route's template, "" when
// none matched; status its answer's code. It allocates nothing once the
// route has answered with the status's class before.
func (h *Histograms) Request(route string, status int, d time.Duration) {
	c := max(min(status/100-1, len(statusClasses)-1), 0)
	if rc := (*h.routes.Load())[route]; rc != nil {
		if o := rc[c].Load(); o != nil {
			o.Observe(d.Seconds())
			return
		}
	}
	h.child(route, c).Observe(d.Seconds())
}

// child returns route's histogram of status class c, creating it: the
// route map is copied on write, so the hot path reads it without a lock.
func (h *Histograms) child(route string, c int) prometheus.Observer {
	h.mu.Lock()
	defer h.mu.Unlock()
	old := *h.routes.Load()
	rc := old[route]
	if rc == nil {
		rc = new(routeChildren)
		next := maps.Clone(old)
		next[route] = rc
		h.routes.Store(&next)
	}
	if o := rc[c].Load(); o != nil {
		return o.Observer
	}
	label := route
	if label == "" {
		label = Unmatched
	}
	o := &child{h.requests.WithLabelValues(label, statusClasses[c])}
	rc[c].Store(o)
	return o.Observer
}

// IngestAck records the wait of one acknowledged request for its events'
// ack.
func (h *Histograms) IngestAck(d time.Duration) { h.ingestAck.Observe(d.Seconds()) }

// Insert records one successful insert into views_raw.
func (h *Histograms) Insert(d time.Duration) { h.insert.Observe(d.Seconds()) }

// Feed records one successful feed's copy.
func (h *Histograms) Feed(d time.Duration) { h.feed.Observe(d.Seconds()) }

// FeedLag records how long a feed's rows waited in views_raw.
func (h *Histograms) FeedLag(d time.Duration) { h.feedLag.Observe(max(d, 0).Seconds()) }

// ValidationLag records the age of a counted batch's oldest event.
func (h *Histograms) ValidationLag(d time.Duration) { h.validationLag.Observe(max(d, 0).Seconds()) }

// WriteTo writes the histograms in the Prometheus text exposition format,
// each family once, sorted by name.
func (h *Histograms) WriteTo(w io.Writer) (int64, error) {
	mfs, err := h.reg.Gather()
	if err != nil {
		return 0, fmt.Errorf("latency: gather: %w", err)
	}
	var n int64
	for _, mf := range mfs {
		k, err := expfmt.MetricFamilyToText(w, mf)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
