package viewcount_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/latency/latencytest"
)

// busyMetrics are metrics with every series written: each counter, gauge,
// labelled family and histogram has something to show.
func busyMetrics() *viewcount.Metrics {
	m := viewcount.NewMetricsWith(latency.New())
	m.Received.Add(9)
	m.BadRequests.Add(1)
	m.RateLimited.Add(1)
	m.Published.Add(8)
	m.PublishErrors.Add(1)
	m.Messages.Add(3)
	for _, r := range viewcount.Reasons {
		m.Validated(r)
	}
	m.Inserted.Add(7)
	m.InsertErrors.Add(1)
	m.Fed.Add(7)
	m.FeedErrors.Add(1)
	m.SetPipelineLag(1500)
	m.SetPartitionState(0, viewcount.PartitionState{RetryKeys: 3, ViewKeys: 2, RotationNetworks: 1, Held: 1})
	m.SetHealth("stream", nil)
	m.SetHealth("partition/0", errors.New("stalled"))
	m.ObserveRequest("/p.gif", 200, 300*time.Microsecond)
	m.ObserveRequest("/v1/sites/:site/count", 200, time.Millisecond)
	m.ObserveRequest("/v1/sites/:site/count", 400, time.Millisecond)
	m.ObserveRequest("", 404, time.Millisecond)
	m.ObserveIngestAck(time.Millisecond)
	m.ObserveInsert(80 * time.Millisecond)
	m.ObserveFeed(150 * time.Millisecond)
	m.ObserveFeedLag(3 * time.Second)
	m.ObserveValidationLag(4 * time.Second)
	return m
}

// servedBefore are the families /metrics served before the histograms
// came; dashboards, alerts and loadgen read them, so each must stay.
var servedBefore = map[string]string{
	"viewcount_events_received_total": "counter", "viewcount_bad_requests_total": "counter", "viewcount_rate_limited_total": "counter",
	"viewcount_events_published_total": "counter", "viewcount_publish_errors_total": "counter", "viewcount_stream_messages_total": "counter",
	"viewcount_events_validated_total": "counter", "viewcount_rows_inserted_total": "counter", "viewcount_insert_errors_total": "counter",
	"viewcount_rows_fed_total": "counter", "viewcount_feed_errors_total": "counter", "viewcount_pipeline_lag_seconds": "gauge",
	"viewcount_validator_partitions": "gauge", "viewcount_validator_window_keys": "gauge", "viewcount_validator_rotation_networks": "gauge",
	"viewcount_validator_held_views": "gauge", "viewcount_validator_rotation_untracked_total": "counter",
	"go_memstats_heap_inuse_bytes": "gauge", "go_memstats_sys_bytes": "gauge", "go_goroutines": "gauge", "process_resident_memory_bytes": "gauge",
	"viewcount_healthy": "gauge",
}

// TestExpositionHasNoDuplicates: /metrics, hand-written counters and the
// library's histograms together, is valid Prometheus text: it parses, each
// family has one HELP and one TYPE line and all its lines in one group,
// every family served before is still there with its type, and each
// histogram is there.
func TestExpositionHasNoDuplicates(t *testing.T) {
	m := busyMetrics()
	var b bytes.Buffer
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	mfs := latencytest.Read(t, m) // fails on a second HELP or TYPE

	typ, problems := expositionProblems(text)
	for _, p := range problems {
		t.Error(p)
	}
	for family := range typ {
		if mfs[family] == nil {
			t.Errorf("%s: not in the parsed families", family)
		}
	}
	for name, want := range servedBefore {
		if mfs[name] == nil || typ[name] != want {
			t.Errorf("%s is no longer served as a %s (type %q)", name, want, typ[name])
		}
	}
	for _, name := range []string{latency.RequestName, latency.IngestAckName, latency.InsertName, latency.FeedName, latency.FeedLagName, latency.ValidationLagName} {
		if typ[name] != "histogram" || mfs[name].GetMetric()[0].GetHistogram().GetSampleCount() == 0 {
			t.Errorf("%s: type %q, or nothing observed", name, typ[name])
		}
	}
	if got, want := len(mfs), len(servedBefore)+6; got != want {
		t.Errorf("%d families, want %d", got, want)
	}
}

// TestHistogramsLint runs the client library's linter (Prometheus' naming
// and unit conventions) over the histograms.
func TestHistogramsLint(t *testing.T) {
	var hists []*dto.MetricFamily
	for _, mf := range latencytest.Read(t, busyMetrics()) {
		if mf.GetType() == dto.MetricType_HISTOGRAM {
			hists = append(hists, mf)
		}
	}
	if len(hists) != 6 {
		t.Fatalf("%d histograms, want 6", len(hists))
	}
	problems, err := promlint.NewWithMetricFamilies(hists).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

// expositionProblems checks what the text format requires and its parser
// lets pass: each family has one HELP and one TYPE line, before its
// samples, and all its lines in one group. It returns each family's type.
func expositionProblems(text string) (types map[string]string, problems []string) {
	help, typ := map[string]int{}, map[string]string{}
	done := map[string]bool{} // families whose group has ended
	current := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		var family string
		switch {
		case strings.HasPrefix(line, "# HELP "):
			family = strings.Fields(line)[2]
			help[family]++
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			family = f[2]
			if _, ok := typ[family]; ok {
				problems = append(problems, "second TYPE line for "+family)
			}
			typ[family] = f[3]
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		default:
			name, _, _ := strings.Cut(strings.Fields(line)[0], "{")
			family = name
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				if base, ok := strings.CutSuffix(name, suffix); ok && typ[base] == "histogram" {
					family = base
				}
			}
			if _, ok := typ[family]; !ok {
				problems = append(problems, fmt.Sprintf("%q: a sample before its TYPE line", line))
			}
		}
		if family != current {
			if done[family] {
				problems = append(problems, fmt.Sprintf("%s is written in two places: the second group starts at %q", family, line))
			}
			done[current], current = true, family
		}
	}
	for family, n := range help {
		if n != 1 {
			problems = append(problems, fmt.Sprintf("%s has %d HELP lines", family, n))
		}
	}
	for family := range typ {
		if help[family] != 1 {
			problems = append(problems, family+" has a TYPE and no HELP")
		}
	}
	return typ, problems
}

// TestExpositionProblems: the check above catches what a mix of
// hand-written and library exposition could get wrong.
func TestExpositionProblems(t *testing.T) {
	const ok = "# HELP a_total A.\n# TYPE a_total counter\na_total 1\n" +
		"# HELP h_seconds H.\n# TYPE h_seconds histogram\nh_seconds_bucket{le=\"+Inf\"} 1\nh_seconds_sum 2\nh_seconds_count 1\n"
	f := func(text string, want string) {
		t.Helper()
		_, problems := expositionProblems(text)
		if got := strings.Join(problems, "; "); !strings.Contains(got, want) || (want == "") != (got == "") {
			t.Errorf("%q: problems %q, want %q", text, got, want)
		}
	}
	f(ok, "")
	f(ok+"# HELP a_total A.\n# TYPE a_total counter\na_total 1\n", "a_total has 2 HELP lines")
	f(ok+"a_total 2\n", "a_total is written in two places")
	f("# HELP b B.\nb 1\n# TYPE b gauge\n", "a sample before its TYPE line")
	f("# TYPE c gauge\nc 1\n", "c has a TYPE and no HELP")
}

// TestMetricsMemoryParts: each part of the memory budget is served with
// its budget, and with its use where it is measured, in an exposition
// that parses (one HELP and TYPE per family).
func TestMetricsMemoryParts(t *testing.T) {
	m := viewcount.NewMetrics()
	var b strings.Builder
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "viewcount_memory_") {
		t.Error("memory parts served without a budget")
	}
	m.SetMemoryParts([]viewcount.MemoryPart{
		{Name: "total", Budget: 1 << 30, Used: func() int64 { return 700 << 20 }},
		{Name: "stats_cache", Budget: 26 << 20},
	})
	b.Reset()
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		`viewcount_memory_budget_bytes{part="total"} 1073741824` + "\n",
		`viewcount_memory_budget_bytes{part="stats_cache"} 27262976` + "\n",
		`viewcount_memory_used_bytes{part="total"} 734003200` + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q", want)
		}
	}
	if strings.Contains(text, `viewcount_memory_used_bytes{part="stats_cache"}`) {
		t.Error("a part with no measure served a use")
	}
	if _, problems := expositionProblems(text); len(problems) > 0 {
		t.Errorf("exposition: %v", problems)
	}
}
