package loadgen

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Report is the result of one Run.
type Report struct {
	Target      string   `json:"target"`
	Endpoint    Endpoint `json:"endpoint"`
	Connections int      `json:"connections"`
	Batch       int      `json:"batch,omitempty"`       // events per request, batch endpoint only
	TargetRate  float64  `json:"target_rate,omitempty"` // open loop only
	Elapsed     float64  `json:"elapsed_seconds"`
	Requests    int64    `json:"requests"` // answered, whatever the status
	OK          int64    `json:"ok"`       // answered 2xx
	Failed      int64    `json:"failed"`   // non-2xx answers and transport errors
	Events      int64    `json:"events"`   // events in 2xx answers
	RPS         float64  `json:"requests_per_second"`
	EPS         float64  `json:"events_per_second"`
	Latency     Latency  `json:"latency_ms"`
	// Status counts answers by HTTP status code.
	Status map[string]int64 `json:"status"`
	// TransportErrors counts requests that got no answer, by kind.
	TransportErrors map[string]int64 `json:"transport_errors,omitempty"`
	// Sent counts the acknowledged hits by class, for scoring verdicts.
	Sent        Tally      `json:"sent"`
	Lag         *Lag       `json:"lag,omitempty"`
	LagSeries   *LagSeries `json:"lag_series,omitempty"`
	LagError    string     `json:"lag_error,omitempty"` // why Lag and LagSeries are missing though asked for
	Memory      *Memory    `json:"server_memory,omitempty"`
	Interrupted bool       `json:"interrupted,omitempty"`
}

// Latency percentiles in milliseconds, from the scheduled send time in open
// loop and from the actual send time in closed loop.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Lag is the end-to-end delay: from the last answer until the server had
// inserted every acknowledged event into views_raw.
type Lag struct {
	Seconds float64 `json:"seconds"`
	Reached bool    `json:"reached"` // false: timed out with Rows < Want
	Rows    int64   `json:"rows"`    // rows inserted since the run started
	Want    int64   `json:"want"`
}

// LagSeries is the pipeline lag sampled while sending: every
// IntervalSeconds, the age of the newest inserted event (how long ago the
// acknowledged count reached the server's inserted count), samples of the
// first WarmupSeconds left out. It is what "sustained for 60 s with
// pipeline lag p99 < 2 s" is measured with.
type LagSeries struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	WarmupSeconds   float64 `json:"warmup_seconds"`
	Samples         int     `json:"samples"` // 0: the run was shorter than the warm-up
	P50             float64 `json:"p50_seconds"`
	P99             float64 `json:"p99_seconds"`
	Max             float64 `json:"max_seconds"`
	ScrapeErrors    int     `json:"scrape_errors,omitempty"` // samples lost to failed /metrics reads
}

// Memory is the server's memory as its /metrics reports it
// (process_resident_memory_bytes, go_memstats_heap_inuse_bytes): at the
// start and the end of sending, and the highest value sampled meanwhile
// (once a second, or with the lag series). A gauge the server does not
// export stays zero and is left out.
type Memory struct {
	RSSStart  int64 `json:"rss_start_bytes,omitempty"`
	RSSEnd    int64 `json:"rss_end_bytes,omitempty"`
	RSSPeak   int64 `json:"rss_peak_bytes,omitempty"`
	HeapStart int64 `json:"heap_inuse_start_bytes,omitempty"`
	HeapEnd   int64 `json:"heap_inuse_end_bytes,omitempty"`
	HeapPeak  int64 `json:"heap_inuse_peak_bytes,omitempty"`
}

func (r *run) report(elapsed time.Duration) *Report {
	h, status, errs, tally, events := r.merged()
	rep := &Report{
		Target:      r.cfg.Server,
		Endpoint:    r.cfg.Endpoint,
		Connections: r.cfg.Connections,
		TargetRate:  r.cfg.Rate,
		Elapsed:     elapsed.Seconds(),
		Events:      events,
		Status:      make(map[string]int64, len(status)),
		Sent:        tally,
		Latency: Latency{
			P50: ms(h.Quantile(0.5)), P90: ms(h.Quantile(0.9)), P99: ms(h.Quantile(0.99)),
			P999: ms(h.Quantile(0.999)), Max: ms(h.Max()), Mean: ms(h.Mean()),
		},
	}
	if r.cfg.Endpoint == EndpointBatch {
		rep.Batch = r.cfg.Batch
	}
	for code, n := range status {
		rep.Status[strconv.Itoa(code)] = n
		rep.Requests += n
		if code/100 == 2 {
			rep.OK += n
		} else {
			rep.Failed += n
		}
	}
	if len(errs) > 0 {
		rep.TransportErrors = errs
		for _, n := range errs {
			rep.Failed += n
		}
	}
	if s := elapsed.Seconds(); s > 0 {
		rep.RPS = float64(rep.Requests) / s
		rep.EPS = float64(rep.Events) / s
	}
	return rep
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fmtDur prints a latency with three significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', 0, 64) + "µs"
	case d < time.Second:
		return strconv.FormatFloat(ms(d), 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64) + "s"
}

func fmtMS(v float64) string { return fmtDur(time.Duration(v * float64(time.Millisecond))) }

// WriteText writes the report for people.
func (r *Report) WriteText(w io.Writer) {
	mode := "closed loop"
	if r.TargetRate > 0 {
		mode = fmt.Sprintf("open loop at %.0f req/s", r.TargetRate)
	}
	ep := string(r.Endpoint)
	if r.Batch > 0 {
		ep += fmt.Sprintf(" (%d events/request)", r.Batch)
	}
	fmt.Fprintf(w, "target     %s  %s  %d connections  %s\n", r.Target, ep, r.Connections, mode)
	if r.Endpoint == EndpointCount {
		fmt.Fprintf(w, "requests   %d in %.2fs = %.0f req/s  (ok %d, failed %d)\n",
			r.Requests, r.Elapsed, r.RPS, r.OK, r.Failed)
	} else {
		fmt.Fprintf(w, "requests   %d in %.2fs = %.0f req/s, %.0f events/s  (ok %d, failed %d)\n",
			r.Requests, r.Elapsed, r.RPS, r.EPS, r.OK, r.Failed)
	}
	l := r.Latency
	fmt.Fprintf(w, "latency    p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s\n",
		fmtMS(l.P50), fmtMS(l.P90), fmtMS(l.P99), fmtMS(l.P999), fmtMS(l.Max), fmtMS(l.Mean))
	fmt.Fprintf(w, "status     %s\n", counts(r.Status))
	if len(r.TransportErrors) > 0 {
		fmt.Fprintf(w, "errors     %s\n", counts(r.TransportErrors))
	}
	if len(r.Sent.Sent) > 1 {
		var parts []string
		for _, c := range Classes {
			if n := r.Sent.Sent[c]; n > 0 {
				s := fmt.Sprintf("%s %d", c, n)
				if k := r.Sent.Retries[c]; k > 0 {
					s += fmt.Sprintf(" (+%d retries)", k)
				}
				parts = append(parts, s)
			}
		}
		fmt.Fprintf(w, "sent       %s\n", strings.Join(parts, ", "))
	}
	if r.Lag != nil {
		if r.Lag.Reached {
			fmt.Fprintf(w, "lag        all %d events inserted %.2fs after the last answer\n", r.Lag.Want, r.Lag.Seconds)
		} else {
			fmt.Fprintf(w, "lag        timed out after %.2fs: %d of %d events inserted\n", r.Lag.Seconds, r.Lag.Rows, r.Lag.Want)
		}
	}
	if s := r.LagSeries; s != nil {
		if s.Samples > 0 {
			fmt.Fprintf(w, "lag series p50 %.2fs  p99 %.2fs  max %.2fs  (%d samples every %s, first %s left out)\n",
				s.P50, s.P99, s.Max, s.Samples, time.Duration(s.IntervalSeconds*float64(time.Second)),
				time.Duration(s.WarmupSeconds*float64(time.Second)))
		} else {
			fmt.Fprintf(w, "lag series no samples after the first %.0fs\n", s.WarmupSeconds)
		}
		if s.ScrapeErrors > 0 {
			fmt.Fprintf(w, "           %d samples lost: /metrics failed\n", s.ScrapeErrors)
		}
	}
	if r.LagError != "" {
		fmt.Fprintf(w, "lag        %s\n", r.LagError)
	}
	if m := r.Memory; m != nil {
		var parts []string
		if m.RSSEnd > 0 {
			parts = append(parts, fmt.Sprintf("rss %s → %s (peak %s)", fmtBytes(m.RSSStart), fmtBytes(m.RSSEnd), fmtBytes(m.RSSPeak)))
		}
		if m.HeapEnd > 0 {
			parts = append(parts, fmt.Sprintf("heap in use %s → %s (peak %s)", fmtBytes(m.HeapStart), fmtBytes(m.HeapEnd), fmtBytes(m.HeapPeak)))
		}
		fmt.Fprintf(w, "server mem %s\n", strings.Join(parts, ", "))
	}
	if r.Interrupted {
		fmt.Fprintln(w, "(interrupted)")
	}
}

func counts(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// Comparison is a run against a bare baseline server and the same run
// against the real one: the ratio holds on a noisy machine where absolute
// numbers do not.
type Comparison struct {
	Baseline *Report `json:"baseline,omitempty"`
	Server   *Report `json:"server"`
	Ratio    *Ratio  `json:"ratio,omitempty"`
}

// Ratio is server ÷ baseline.
type Ratio struct {
	Throughput float64 `json:"throughput"`
	P50        float64 `json:"p50"`
	P99        float64 `json:"p99"`
}

// Compare fills in the ratio of server to baseline.
func Compare(baseline, server *Report) Comparison {
	c := Comparison{Baseline: baseline, Server: server}
	if baseline != nil && server != nil {
		c.Ratio = &Ratio{
			Throughput: ratio(server.RPS, baseline.RPS),
			P50:        ratio(server.Latency.P50, baseline.Latency.P50),
			P99:        ratio(server.Latency.P99, baseline.Latency.P99),
		}
	}
	return c
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// WriteText writes both reports and the ratio.
func (c Comparison) WriteText(w io.Writer) {
	if c.Baseline != nil {
		fmt.Fprintln(w, "== baseline (bare Gin handlers, in-process)")
		c.Baseline.WriteText(w)
		fmt.Fprintln(w, "== server")
	}
	c.Server.WriteText(w)
	if c.Ratio != nil {
		fmt.Fprintf(w, "== server/baseline: throughput %.3f×, p50 %.2f×, p99 %.2f×\n", c.Ratio.Throughput, c.Ratio.P50, c.Ratio.P99)
	}
}
