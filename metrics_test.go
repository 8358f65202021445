package viewcount

import (
	"bufio"
	"strconv"
	"strings"
	"testing"
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
