package loadgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistogramQuantilesMatchSortedReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		draw func() time.Duration
	}{
		{"lognormal around 1ms", func() time.Duration {
			return time.Duration(math.Exp(rng.NormFloat64()*1.5) * float64(time.Millisecond))
		}},
		{"uniform 1µs..60s", func() time.Duration {
			return time.Microsecond + time.Duration(rng.Int64N(int64(60*time.Second)))
		}},
		{"bimodal", func() time.Duration {
			if rng.IntN(100) == 0 {
				return 2*time.Second + time.Duration(rng.Int64N(int64(time.Second)))
			}
			return 200*time.Microsecond + time.Duration(rng.Int64N(int64(100*time.Microsecond)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			ref := make([]time.Duration, 100000)
			for i := range ref {
				ref[i] = tc.draw()
				h.Record(ref[i])
			}
			slices.Sort(ref)
			for _, q := range []float64{0.001, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1} {
				want := ref[int(math.Ceil(q*float64(len(ref))))-1]
				got := h.Quantile(q)
				if rel := math.Abs(float64(got-want)) / float64(want); rel > 0.01 {
					t.Errorf("q%v = %v, want %v (off by %.2f%%)", q, got, want, rel*100)
				}
			}
			if h.Max() != ref[len(ref)-1] || h.Min() != ref[0] || h.Count() != uint64(len(ref)) {
				t.Errorf("max %v min %v count %d; want %v %v %d", h.Max(), h.Min(), h.Count(), ref[len(ref)-1], ref[0], len(ref))
			}
		})
	}
}

func TestHistogramMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var all, a, b Histogram
	for i := range 10000 {
		d := time.Duration(rng.Int64N(int64(time.Second)))
		all.Record(d)
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	var m Histogram
	m.Merge(&a)
	m.Merge(&b)
	m.Merge(&Histogram{})
	if m != all {
		t.Fatal("merged histogram differs from recording everything in one")
	}
}

func TestHistogramEdges(t *testing.T) {
	var h Histogram
	if h.Quantile(0.99) != 0 || h.Mean() != 0 {
		t.Fatal("empty histogram not zero")
	}
	h.Record(-time.Second) // clock step: counts as zero
	h.Record(5 * time.Minute)
	if h.Min() != 0 || h.Max() != 5*time.Minute || h.Quantile(1) != 5*time.Minute {
		t.Fatalf("min %v max %v q1 %v", h.Min(), h.Max(), h.Quantile(1))
	}
	for v := uint64(0); v < 1<<20; v += 1 + v/50 {
		lo, hi := bucketRange(bucketOf(v))
		if v < lo || v >= hi {
			t.Fatalf("%d in bucket [%d, %d)", v, lo, hi)
		}
		if v >= 1000 && float64(hi-lo)/float64(lo) > 0.01 {
			t.Fatalf("bucket [%d, %d) wider than 1%%", lo, hi)
		}
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	for i := range b.N {
		h.Record(time.Duration(i%100000) * time.Microsecond)
	}
}

// TestHistogramSince: a window (what a histogram recorded after a copy of
// it was taken) has the same count, sum and quantiles as a histogram of
// the window's values alone, and min and max within their buckets, for
// random runs spanning nanoseconds to the overflow bucket.
func TestHistogramSince(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	value := func() time.Duration {
		return time.Duration(rng.Uint64N(1 << rng.UintN(40)))
	}
	for range 200 {
		var run, alone Histogram
		for range rng.IntN(500) {
			run.Record(value())
		}
		before := run
		for range 1 + rng.IntN(500) {
			v := value()
			run.Record(v)
			alone.Record(v)
		}
		w := run.Since(&before)
		if w.Count() != alone.Count() || w.Mean() != alone.Mean() {
			t.Fatalf("window count %d mean %v, alone %d %v", w.Count(), w.Mean(), alone.Count(), alone.Mean())
		}
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
			got, want := w.Quantile(q), alone.Quantile(q)
			if b := bucketOf(uint64(want)); b != bucketOf(uint64(got)) && want != alone.Max() && want != alone.Min() {
				t.Fatalf("q%.3f: window %v, alone %v: not the same bucket", q, got, want)
			}
		}
		for name, pair := range map[string][2]time.Duration{"min": {w.Min(), alone.Min()}, "max": {w.Max(), alone.Max()}} {
			got, want := pair[0], pair[1]
			if bucketOf(uint64(got)) != bucketOf(uint64(want)) && !(name == "max" && bucketOf(uint64(want)) == histBuckets-1) {
				t.Fatalf("%s: window %v, alone %v: not the same bucket", name, got, want)
			}
		}
		if w.Max() > run.Max() || w.Min() < run.Min() {
			t.Fatalf("window [%v, %v] outside the run's [%v, %v]", w.Min(), w.Max(), run.Min(), run.Max())
		}
	}
}
