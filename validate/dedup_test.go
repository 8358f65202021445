package validate

import (
	"testing"
)

func (w *window) check(t *testing.T) {
	t.Helper()
	sum := 0
	for _, g := range w.gens {
		sum += len(g.keys)
	}
	if sum != w.n {
		t.Fatalf("window counts %d keys, generations hold %d", w.n, sum)
	}
	if w.n > w.maxKeys {
		t.Fatalf("window holds %d keys, cap %d", w.n, w.maxKeys)
	}
}

func TestWindowBoundaries(t *testing.T) {
	w := newWindow(1000, 100)
	now := int64(0)
	f := func(key uint64, at int64, want bool) {
		t.Helper()
		now = max(now, at)
		w.expire(now)
		if got := w.seen(key, at, now); got != want {
			t.Errorf("seen(%d) at %d = %v, want %v", key, at, got, want)
		}
		w.check(t)
	}
	f(1, 0, false)
	f(1, 999, true)   // just inside; also refreshes the key to 999
	f(1, 1998, true)  // just inside the refreshed window
	f(1, 2998, false) // exactly one window after the last sighting
	f(2, 3000, false)
	f(2, 2500, true) // late: older than the stored time, still a duplicate
	f(2, 3999, true)
	f(3, 5000, false)
	f(2, 5000, false) // key 2's generation expired
}

func TestWindowExpiresGenerations(t *testing.T) {
	w := newWindow(1000, 1<<20)
	for i := range int64(100) {
		w.expire(i * 100)
		w.seen(uint64(i), i*100, i*100)
		w.check(t)
	}
	// Only the last window's keys (plus one partly-expired generation) stay.
	if w.n > 15 || len(w.gens) > gensPerWindow+2 {
		t.Errorf("after 100 spaced keys: %d keys in %d generations", w.n, len(w.gens))
	}
}

// TestWindowBounded drives 3× the cap of distinct keys, all inside one
// window (the worst case: nothing expires), and checks the cap holds at every
// step and that the most recent keys are the ones kept.
func TestWindowBounded(t *testing.T) {
	const maxKeys = 1000
	w := newWindow(3_600_000, maxKeys)
	for i := range uint64(3 * maxKeys) {
		now := int64(i) // 1 ms apart: all within the hour
		w.expire(now)
		if w.seen(i, now, now) {
			t.Fatalf("distinct key %d reported seen", i)
		}
		w.check(t)
	}
	if w.n < maxKeys*(gensPerWindow-1)/gensPerWindow {
		t.Errorf("after eviction only %d keys remain, want at least %d", w.n, maxKeys*(gensPerWindow-1)/gensPerWindow)
	}
	now := int64(3*maxKeys) - 1
	if !w.seen(uint64(3*maxKeys-1), now, now) {
		t.Error("the newest key was evicted")
	}
	if w.seen(0, now, now) {
		t.Error("the oldest key survived 3× the cap")
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
