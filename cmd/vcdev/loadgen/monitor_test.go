package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestLagSeries(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// steady: 100 events per 100 ms, each inserted 300 ms after its answer.
	var steady []lagSample
	for k := 1; k <= 8; k++ {
		steady = append(steady, lagSample{ms(100 * k), int64(100 * k), int64(max(100*(k-3), 0))})
	}
	for _, c := range []struct {
		name    string
		samples []lagSample
		warmup  time.Duration
		want    []time.Duration
	}{
		{"caught up", []lagSample{{ms(100), 10, 10}, {ms(200), 20, 20}}, 0, []time.Duration{0, 0}},
		{"steady 300 ms behind", steady, 0, []time.Duration{ms(100), ms(200), ms(300), ms(300), ms(300), ms(300), ms(300), ms(300)}},
		{"warm-up left out", steady, ms(550), []time.Duration{ms(300), ms(300), ms(300)}},
		{"interpolated between samples", []lagSample{{ms(100), 100, 0}, {ms(200), 200, 150}}, 0, []time.Duration{ms(100), ms(50)}},
		{"interpolated from the start", []lagSample{{ms(100), 100, 25}}, 0, []time.Duration{ms(75)}},
		{"nothing answered yet", []lagSample{{ms(100), 0, 0}, {ms(200), 0, 0}}, 0, nil},
		{"other traffic inserted too", []lagSample{{ms(100), 100, 180}}, 0, []time.Duration{0}},
		{"counter reset", []lagSample{{ms(100), 100, -5}}, 0, []time.Duration{ms(100)}},
		{"stalled pipeline", []lagSample{{ms(100), 100, 0}, {ms(200), 200, 100}, {ms(300), 300, 100}, {ms(400), 300, 100}},
			0, []time.Duration{ms(100), ms(100), ms(200), ms(300)}},
		{"idle sender", []lagSample{{ms(100), 100, 50}, {ms(200), 100, 100}, {ms(300), 100, 100}}, 0, []time.Duration{ms(50), 0, 0}},
	} {
		if got := lagSeries(c.samples, c.warmup); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: lagSeries = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestScrapeMetrics(t *testing.T) {
	f := func(body string, want serverMetrics) {
		t.Helper()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		defer srv.Close()
		got, err := scrapeMetrics(context.Background(), srv.Client(), srv.URL)
		if err != nil || got != want {
			t.Fatalf("scrapeMetrics(%q) = %+v, %v; want %+v", body, got, err, want)
		}
	}
	f("", serverMetrics{})
	f("# HELP viewcount_rows_inserted_total rows\nviewcount_rows_inserted_total 42\n", serverMetrics{rows: 42, hasRows: true})
	f("viewcount_rows_inserted_total_x 7\nviewcount_rows_inserted_total{a=\"b\"} 9\n", serverMetrics{})
	f("process_resident_memory_bytes 1.2e+08\ngo_memstats_heap_inuse_bytes 5e6 1700000000000\nviewcount_rows_inserted_total 3\n",
		serverMetrics{rows: 3, rss: 1.2e8, heap: 5e6, hasRows: true, hasRSS: true, hasHeap: true})
	f("process_resident_memory_bytes garbage\n", serverMetrics{})
}

// TestRunLagSeries runs against a server whose pipeline inserts every event
// 300 ms after answering it: the lag series and the drain show it, and the
// memory gauges are reported.
func TestRunLagSeries(t *testing.T) {
	srv := newTestServer(t, serverOpts{status: ok, insertDelay: 300 * time.Millisecond, memory: true})
	var progress strings.Builder
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 2, Rate: 300, Duration: 1800 * time.Millisecond,
		Endpoint: EndpointBatch, Batch: 5, Lag: true, Progress: &progress}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	ls := rep.LagSeries
	if ls == nil || ls.Samples < 4 || ls.IntervalSeconds != 0.1 || ls.WarmupSeconds != 1 {
		t.Fatalf("lag series %+v", ls)
	}
	// Samples are 100 ms apart and the answered count between them is
	// interpolated: allow for that, and for a loaded test machine.
	if ls.P50 < 0.2 || ls.P50 > 0.6 || ls.Max < ls.P99 || ls.P99 < ls.P50 {
		t.Errorf("lag series %+v, want about 0.3 s", ls)
	}
	if rep.Lag == nil || !rep.Lag.Reached || rep.Lag.Seconds < 0.2 {
		t.Errorf("drain %+v, want reached after about 0.3 s", rep.Lag)
	}
	m := rep.Memory
	if m == nil || m.RSSStart != 100<<20 || m.RSSEnd != 100<<20 || m.RSSPeak != 100<<20 ||
		m.HeapStart != 50<<20 || m.HeapEnd <= m.HeapStart || m.HeapPeak != m.HeapEnd {
		t.Fatalf("memory %+v", m)
	}
	for _, s := range []string{"lag ", "rss 100.0 MiB", "heap "} {
		if !strings.Contains(progress.String(), s) {
			t.Errorf("progress lacks %q:\n%s", s, progress.String())
		}
	}
	var text strings.Builder
	rep.WriteText(&text)
	for _, s := range []string{"lag series p50", "server mem rss 100.0 MiB → 100.0 MiB", "heap in use 50.0 MiB"} {
		if !strings.Contains(text.String(), s) {
			t.Errorf("text report lacks %q:\n%s", s, text.String())
		}
	}
	raw, _ := json.Marshal(rep)
	for _, s := range []string{`"lag_series":{"interval_seconds":0.1`, `"p99_seconds"`, `"server_memory":{"rss_start_bytes":104857600`, `"heap_inuse_end_bytes"`} {
		if !strings.Contains(string(raw), s) {
			t.Errorf("JSON lacks %s: %s", s, raw)
		}
	}
}

func TestRunMemoryAbsent(t *testing.T) {
	srv := newCountingServer(t, ok, 0)
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 2, Requests: 20}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Memory != nil || rep.LagSeries != nil {
		t.Fatalf("memory %+v, lag series %+v: not asked for or not exported", rep.Memory, rep.LagSeries)
	}
	raw, _ := json.Marshal(rep)
	if strings.Contains(string(raw), "server_memory") {
		t.Fatalf("JSON has server_memory: %s", raw)
	}
}
