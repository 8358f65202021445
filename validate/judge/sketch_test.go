package judge

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCountMin(t *testing.T) {
	c := newCountMin(10)
	f := func(key uint64, wantAdd, wantGet uint16) {
		t.Helper()
		h := mix(key, 0)
		if got := c.add(h); got != wantAdd {
			t.Errorf("add(%d) = %d, want %d", key, got, wantAdd)
		}
		if got := c.get(h); got != wantGet {
			t.Errorf("get(%d) = %d, want %d", key, got, wantGet)
		}
	}
	f(1, 1, 1)
	f(1, 2, 2)
	f(2, 1, 1) // few keys in 1024 columns: exact
	f(1, 3, 3)
	c.reset()
	if got := c.get(mix(1, 0)); got != 0 {
		t.Errorf("after reset: %d", got)
	}
	f(1, 1, 1)

	// Saturation: the counter stops at the top instead of wrapping.
	h := mix(99, 0)
	for range math.MaxUint16 + 10 {
		c.add(h)
	}
	if got := c.get(h); got != math.MaxUint16 {
		t.Errorf("saturated counter = %d, want %d", got, math.MaxUint16)
	}
	for k := range uint64(maxTouched) {
		c.add(mix(k, 1))
	}
	if !c.overflow {
		t.Error("many keys did not switch reset to a full clear")
	}
	c.reset()
	for i, v := range c.cells {
		if v != 0 {
			t.Fatalf("cell %d = %d after a full reset", i, v)
		}
	}
}

// TestCountMinOverestimate is the sizing claim of visitorLogWidth and
// networkLogWidth: at 1M views per bucket, with a realistic skew (most
// visitors make 1-3 views; networks ~50, a few of them thousands), how far
// above their true count are keys estimated?
func TestCountMinOverestimate(t *testing.T) {
	if testing.Short() {
		t.Skip("2M increments")
	}
	rnd := rand.New(rand.NewPCG(7, 7))
	visitors, networks := newCountMin(visitorLogWidth), newCountMin(networkLogWidth)
	vTruth, nTruth := map[uint64]int{}, map[uint64]int{}
	const views = 1_000_000
	for range views {
		v := mix(rnd.Uint64N(400_000), tagVisitor) // ~2.5 views per visitor
		n := rnd.Uint64N(20_000)                   // ~45 per network
		if rnd.IntN(10) == 0 {
			n = rnd.Uint64N(50) // and 50 with ~2,000
		}
		visitors.add(v)
		vTruth[v]++
		networks.add(mix(n, tagNetwork))
		nTruth[mix(n, tagNetwork)]++
	}
	check := func(kind string, c *countMin, truth map[uint64]int, maxWorst int) {
		over := map[int]int{}
		worst := 0
		for k, n := range truth {
			d := int(c.get(k)) - n
			if d < 0 {
				t.Fatalf("%s undercount: %d < %d", kind, c.get(k), n)
			}
			over[min(d, 5)]++
			worst = max(worst, d)
		}
		t.Logf("%d %s; overestimated by 0: %d, 1: %d, 2: %d, 3: %d, 4: %d, ≥5: %d; worst by %d",
			len(truth), kind, over[0], over[1], over[2], over[3], over[4], over[5], worst)
		if worst > maxWorst {
			t.Errorf("%s: worst overestimate %d, want at most %d", kind, worst, maxWorst)
		}
	}
	check("visitors", visitors, vTruth, 5)
	check("networks", networks, nTruth, 60) // 10% of the 600 limit
}

func TestBucketCounts(t *testing.T) {
	b := newBucketCounts(1000, 8)
	f := func(key uint64, now int64, wantCur, wantPrev uint16) {
		t.Helper()
		cur, prev := b.add(mix(key, 0), now)
		if cur != wantCur || prev != wantPrev {
			t.Errorf("add(%d) at %d = (%d, %d), want (%d, %d)", key, now, cur, prev, wantCur, wantPrev)
		}
	}
	f(1, 0, 1, 0)
	f(1, 999, 2, 0)
	f(1, 1000, 1, 2) // a new bucket: the old one becomes the previous
	f(1, 1999, 2, 2)
	f(1, 3000, 1, 0) // a gap of a whole bucket: nothing recent
	f(1, -1, 2, 0)   // a late event is counted in the current bucket
	if got := b.elapsed(3250); got != 250 {
		t.Errorf("elapsed = %d", got)
	}
	b = newBucketCounts(1000, 8)
	f(2, -4500, 1, 0) // negative times: buckets stay aligned (floor)
	if b.bucket != -5 {
		t.Errorf("bucket = %d, want -5", b.bucket)
	}
}

func TestFloorDiv(t *testing.T) {
	f := func(a, b, want int64) {
		t.Helper()
		if got := floorDiv(a, b); got != want {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", a, b, got, want)
		}
	}
	f(7, 2, 3)
	f(-7, 2, -4)
	f(-8, 2, -4)
	f(0, 5, 0)
}
