package viewcount

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMetricsProcessGauges(t *testing.T) {
	var b strings.Builder
	if _, err := NewMetrics().WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got[name] = f
	}
	// A test binary has some heap, a goroutine or more,
	// and an RSS of at least a MiB.
	for name, min := range map[string]float64{
		"go_memstats_heap_inuse_bytes":  1,
		"go_memstats_sys_bytes":         1 << 20,
		"go_goroutines":                 1,
		"process_resident_memory_bytes": 1 << 20,
	} {
		if got[name] < min {
			t.Errorf("%s = %v, want at least %v", name, got[name], min)
		}
	}
}

func TestMetricsPartitionState(t *testing.T) {
	m := NewMetrics()
	m.SetPartitionState(0, PartitionState{RetryKeys: 3, ViewKeys: 5, Held: 1})
	m.SetPartitionState(2, PartitionState{RetryKeys: 4, ViewKeys: 6, RotationNetworks: 2, RotationUntracked: 7})
	m.SetPartitionState(0, PartitionState{RetryKeys: 10, ViewKeys: 20, Held: 2}) // replaces, not adds
	text := func() string {
		var b strings.Builder
		if _, err := m.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, want := range []string{
		"viewcount_validator_partitions 2\n",
		`viewcount_validator_window_keys{window="retry"} 14` + "\n",
		`viewcount_validator_window_keys{window="views"} 26` + "\n",
		"viewcount_validator_rotation_networks 2\n",
		"viewcount_validator_held_views 2\n",
		"viewcount_validator_rotation_untracked_total 7\n",
	} {
		if got := text(); !strings.Contains(got, want) {
			t.Errorf("missing %q", want)
		}
	}
	m.DropPartition(2)
	if got := text(); !strings.Contains(got, "viewcount_validator_partitions 1\n") || !strings.Contains(got, `window="retry"} 10`+"\n") {
		t.Errorf("after DropPartition:\n%s", got)
	}
}

func TestMetricsPipelineLag(t *testing.T) {
	m := NewMetrics()
	if got := m.PipelineLag(); got != 0 {
		t.Errorf("before any insert: %v, want 0", got)
	}
	m.SetPipelineLag(1500)
	if got := m.PipelineLag(); got != 1500*time.Millisecond {
		t.Errorf("PipelineLag = %v, want 1.5s", got)
	}
}

// TestMetricsValidatedEveryReason: every reason in Reasons has a counter of
// its own (the counters are sized by the list, so a reason added to it
// cannot index past them on the hot path), and a reason not in the list is
// ignored rather than counted or panicking.
func TestMetricsValidatedEveryReason(t *testing.T) {
	m := NewMetrics()
	if len(m.validated) != len(Reasons) {
		t.Fatalf("%d verdict counters for %d reasons", len(m.validated), len(Reasons))
	}
	seen := map[Reason]bool{}
	for i, r := range Reasons {
		if seen[r] {
			t.Fatalf("reason %q listed twice: its second counter would never count", r)
		}
		seen[r] = true
		for range i + 1 {
			m.Validated(r)
		}
	}
	m.Validated(Reason("not_a_reason"))
	m.Validated("")
	var b strings.Builder
	if _, err := m.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, line := range strings.Split(b.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "viewcount_events_validated_total{verdict="); ok {
			label, v, _ := strings.Cut(rest, "} ")
			got[label] = v
		}
	}
	if len(got) != len(Reasons) {
		t.Errorf("%d verdict lines, want one per reason (%d): %v", len(got), len(Reasons), got)
	}
	for i, r := range Reasons {
		if v := got[strconv.Quote(string(r))]; v != strconv.Itoa(i+1) {
			t.Errorf("verdict %q = %q, want %d", r, v, i+1)
		}
	}
}

func BenchmarkMetricsValidated(b *testing.B) {
	m := NewMetrics()
	last := Reasons[len(Reasons)-1]
	for b.Loop() {
		m.Validated(Valid)
		m.Validated(last)
	}
}
