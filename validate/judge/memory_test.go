package judge

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
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
