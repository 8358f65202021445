package judge

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/membudget"
)

// BenchmarkMemory drives 10 million distinct visitors from 1 million
// networks through one Rules over 2 hours of event time (~1,400 views/s, all
// of them valid-looking and new, the worst case for every window), and
// reports the peak heap and the live heap when the windows first filled and
// at the end. Networks come in runs of 16 views with 16 different user
// agents, so every run opens the rotation gate and materialises sketches.
// Memory must be flat once the windows are full: every structure is capped
// or fixed. Run it with:
//
//	go test -run '^$' -bench BenchmarkMemory -benchtime 1x ./validate/judge/
func BenchmarkMemory(b *testing.B) {
	const (
		views    = 10_000_000
		networks = 1_000_000
		run      = 16
	)
	span := 2 * time.Hour
	uas := browserUAs(300)
	pages := make([]string, 100)
	for i := range pages {
		pages[i] = "/p/" + strconv.Itoa(i)
	}
	for b.Loop() {
		r := newTestRules(b, Config{})
		var ms runtime.MemStats
		peak, filled, filledAt := uint64(0), uint64(0), 0
		sample := func() {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		live := func() uint64 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		base := live()
		step := span / views
		e := viewcount.Event{Site: "example.com", Source: viewcount.SourcePixel}
		for i := range views {
			network := netID(uint64(i/run) * 7919 % networks)
			e.Time = t0.Add(time.Duration(i) * step)
			e.Visitor = viewcount.NetworkKey(uint64(i)*0x9E3779B97F4A7C15, network)
			e.Network = network
			e.UA = uas[i%len(uas)]
			e.Page = pages[i%len(pages)]
			e.ID = strconv.Itoa(i)
			r.Judge(&e)
			if i%100_000 == 0 {
				sample()
			}
			// Full: the table at its cap and nearly every slot taken (the
			// last empty slots of a hash table fill slowly).
			if filledAt == 0 && len(r.ids.slots) == r.ids.maxSlots && r.ids.n >= r.ids.maxSlots*9/10 {
				filledAt, filled = i, live()
			}
		}
		sample()
		end := live()
		st := r.Stats()
		const mib = 1 << 20
		b.ReportMetric(float64(peak-base)/mib, "peak-heap-MiB")
		b.ReportMetric(float64(filled-base)/mib, "filled-heap-MiB")
		b.ReportMetric(float64(end-base)/mib, "end-heap-MiB")
		b.Logf("windows filled after %d views; at the end %d ids, %d views, %d rotation networks (%d untracked views), sketches %d MiB",
			filledAt, st.IDs, st.Views, st.RotationNetworks, st.RotationUntracked, st.SketchBytes/mib)
		runtime.KeepAlive(r)
	}
}

// BenchmarkRotationFull is the rotation's worst case: every one of the
// RotationMaxNetworks places of both live generations taken by a network
// holding just under RotationMaxUAs distinct user agents (the most a sketch
// holds before it is latched and freed). It reports the heap that costs
// per tracked network and in all.
//
//	go test -run '^$' -bench BenchmarkRotationFull -benchtime 1x ./validate/judge/
func BenchmarkRotationFull(b *testing.B) {
	cfg, _ := Config{}.WithDefaults()
	for b.Loop() {
		rot := newRotation(cfg)
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.HeapAlloc
		now := t0.UnixMilli()
		for n := range uint64(cfg.RotationMaxNetworks) {
			for u := range uint64(cfg.RotationMaxUAs) { // 50 views, 41 of them after the gate
				rot.rotating(n+1, mix(u, 99), now)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&ms)
		tracked := rot.tracked()
		b.ReportMetric(float64(ms.HeapAlloc-before)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(ms.HeapAlloc-before-uint64(rot.gate.bytes()))/float64(tracked), "B/network")
		runtime.KeepAlive(&rot)
	}
}

// TestStatsBytes: Stats.Bytes, the estimate the memory budget's metrics
// report (viewcount_memory_used_bytes{part="validator"}), is close to what
// the rules' tables really hold on the heap once each is full of distinct
// visitors with their own pages and ids, the strings a real stream's
// decoder allocates for every event. The per-entry costs come from a heap
// profile under load, which also counts the visits evicted since the last
// collection and a map mid-growth, so the estimate may run up to 60 % over
// this steady table; it must never run under it by more than a third.
func TestStatsBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("fills every table: a few seconds")
	}
	const n = 200_000
	var ms runtime.MemStats
	live := func() int64 {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	base := live()
	run := newVisitRun(t, Config{MaxKeys: n, MaxOpenViews: n, MaxVisits: n})
	for i := range n {
		// Distinct strings per event, as decoded off the stream.
		e := pageView(visitT0.Add(time.Duration(i)*time.Millisecond), uint64(i)+1,
			"/articles/"+strconv.Itoa(i)+"/a-title-of-some-length", "id-"+strconv.Itoa(i)+"-0123456789")
		e.Referrer = "https://news.example/" + strconv.Itoa(i)
		run.feed(e)
	}
	heap := live() - base
	st := run.r.Stats()
	if st.Visits != n || st.OpenViews != n {
		t.Fatalf("tables not full: %d visits, %d open views, want %d", st.Visits, st.OpenViews, n)
	}
	t.Logf("estimate %d MiB, heap %d MiB (%.0f bytes an event)", st.Bytes>>20, heap>>20, float64(heap)/n)
	if ratio := float64(st.Bytes) / float64(heap); ratio < 0.67 || ratio > 1.6 {
		t.Errorf("Stats.Bytes %d against %d on the heap: ratio %.2f, want 0.67-1.6", st.Bytes, heap, ratio)
	}
	runtime.KeepAlive(run)
}

// TestWindowKeyBytes: the memory budget sizes the duplicate windows by the
// real size of their slots.
func TestWindowKeyBytes(t *testing.T) {
	if slotBytes != membudget.WindowKeyBytes {
		t.Errorf("a window slot is %d bytes, membudget.WindowKeyBytes %d", slotBytes, membudget.WindowKeyBytes)
	}
}
