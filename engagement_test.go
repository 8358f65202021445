package viewcount

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestEngagedBucket(t *testing.T) {
	for _, c := range []struct {
		ms   uint32
		want int8
	}{{0, 0}, {999, 0}, {1000, 1}, {9999, 9}, {10_000, 10}, {11_999, 10}, {12_000, 11}, {3_599_999, 32}, {3_600_000, 33}, {MaxEngagedMS, 33}} {
		if got := EngagedBucket(c.ms); got != c.want {
			t.Errorf("EngagedBucket(%d) = %d, want %d", c.ms, got, c.want)
		}
	}
	for _, c := range []struct {
		pct  uint8
		want int8
	}{{0, 0}, {4, 0}, {5, 1}, {50, 10}, {99, 19}, {100, 20}, {255, 20}} {
		if got := ScrollBucket(c.pct); got != c.want {
			t.Errorf("ScrollBucket(%d) = %d, want %d", c.pct, got, c.want)
		}
	}
}

// TestHistogramMedians: on random samples, the histogram's medians are
// within their bucket's width of the exact median, and the counts at a
// bound are exact.
func TestHistogramMedians(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := 1 + rng.IntN(500)
		engaged, scroll := make([]uint32, n), make([]uint8, n)
		eh, sh := Histogram{}, Histogram{}
		for i := range n {
			engaged[i] = uint32(rng.ExpFloat64() * 20_000)
			scroll[i] = uint8(rng.IntN(101))
			eh[EngagedBucket(engaged[i])]++
			sh[ScrollBucket(scroll[i])]++
		}
		slices.Sort(engaged)
		slices.Sort(scroll)
		exact := engaged[(n-1)/2]
		b := EngagedBucket(exact)
		width := 1000 * float64(EngagedBuckets[min(int(b)+1, len(EngagedBuckets)-1)]-EngagedBuckets[b])
		if got := float64(eh.EngagedMedian().Milliseconds()); math.Abs(got-float64(exact)) > width+1000 {
			t.Errorf("engaged median %v, exact %d ms (bucket width %v ms)", eh.EngagedMedian(), exact, width)
		}
		if got := sh.ScrollMedian(); math.Abs(got-float64(scroll[(n-1)/2])) > ScrollStep+1 {
			t.Errorf("scroll median %.1f, exact %d", got, scroll[(n-1)/2])
		}
		var atLeast10 int64
		var reached50 int
		for i := range n {
			if engaged[i] >= 10_000 {
				atLeast10++
			}
			if scroll[i] >= 50 {
				reached50++
			}
		}
		if got := eh.EngagedAtLeast(10 * time.Second); got != atLeast10 {
			t.Errorf("engaged ≥ 10 s: %d, exact %d", got, atLeast10)
		}
		if got, want := sh.ScrollReached(50), float64(reached50)/float64(n); math.Abs(got-want) > 1e-9 {
			t.Errorf("reached 50 %%: %.4f, exact %.4f", got, want)
		}
	}
	if (Histogram{}).EngagedMedian() != 0 || (Histogram{}).ScrollReached(50) != 0 {
		t.Error("an empty histogram has a median")
	}
}
