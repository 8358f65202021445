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
