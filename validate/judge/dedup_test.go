package judge

import (
	"math/rand/v2"
	"testing"
)

// check verifies the window's bookkeeping: the count of occupied slots, the
// cap, and that no key sits in two slots.
func (w *window) check(t testing.TB) {
	t.Helper()
	occupied := 0
	keys := make(map[uint64]bool)
	for _, s := range w.slots {
		if s.stamp == 0 {
			continue
		}
		occupied++
		if keys[s.key] {
			t.Fatalf("key %d stored twice", s.key)
		}
		keys[s.key] = true
	}
	if occupied != w.n {
		t.Fatalf("window counts %d keys, slots hold %d", w.n, occupied)
	}
	if len(w.slots) > w.maxSlots || w.n > w.maxSlots {
		t.Fatalf("window has %d slots, %d keys, cap %d", len(w.slots), w.n, w.maxSlots)
	}
}

func TestWindowBoundaries(t *testing.T) {
	w := newWindow(1000, 100)
	now := int64(0)
	f := func(key uint64, at int64, want bool) {
		t.Helper()
		now = max(now, at)
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
	f(2, 5000, false) // key 2 expired

	// Times before 1970 (a zero time.Time is year 1) are times like others.
	w, now = newWindow(1000, 100), -62135596800000
	f(4, now, false)
	f(4, now+999, true)
}

// TestWindowReusesExpired: keys that expire free their slots, so a steady
// trickle never grows the table past its first size.
func TestWindowReusesExpired(t *testing.T) {
	w := newWindow(1000, 1<<20)
	for i := range int64(100_000) {
		w.seen(uint64(i), i*100, i*100) // ten live keys at any time
	}
	w.check(t)
	if len(w.slots) != minBuckets*bucketWays {
		t.Errorf("table grew to %d slots for ten live keys", len(w.slots))
	}
}

// TestWindowKeepsLiveKeysBelowCap: below the cap the table grows instead of
// forgetting a key that is still inside the window.
func TestWindowKeepsLiveKeysBelowCap(t *testing.T) {
	const keys = 50_000
	w := newWindow(3_600_000, 1<<20)
	rng := rand.New(rand.NewPCG(7, 7))
	for i := range keys {
		if w.seen(rng.Uint64(), int64(i), int64(i)) {
			t.Fatalf("distinct key %d reported seen", i)
		}
	}
	w.check(t)
	rng = rand.New(rand.NewPCG(7, 7)) // the same keys again
	for i := range keys {
		if !w.seen(rng.Uint64(), keys, keys) {
			t.Fatalf("key %d of %d forgotten with the table at %d of %d slots", i, keys, len(w.slots), w.maxSlots)
		}
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
		if w.seen(i, now, now) {
			t.Fatalf("distinct key %d reported seen", i)
		}
		w.check(t)
	}
	if w.n < maxKeys*3/4 {
		t.Errorf("after eviction only %d keys remain, want at least %d", w.n, maxKeys*3/4)
	}
	now := int64(3*maxKeys) - 1
	if !w.seen(uint64(3*maxKeys-1), now, now) {
		t.Error("the newest key was evicted")
	}
	// Every bucket received far more than its ways since the first keys.
	for i := range uint64(10) {
		if w.seen(i, now, now) {
			t.Errorf("key %d, among the oldest, survived 3× the cap", i)
		}
	}
}

// TestWindowTinyCap: a cap below one bucket's ways still holds.
func TestWindowTinyCap(t *testing.T) {
	w := newWindow(1000, 1)
	w.seen(1, 0, 0)
	w.seen(2, 1, 1)
	w.check(t)
	if w.n != 1 || !w.seen(2, 2, 2) || w.seen(1, 2, 2) {
		t.Errorf("cap 1: %d keys, want only the newest", w.n)
	}
}

// BenchmarkWindow is one window at its steady state: a million keys
// remembered (far more than the caches hold), and a quarter of the lookups
// repeat a key. Run it with:
//
//	go test -run '^$' -bench BenchmarkWindow -benchtime 2000000x ./validate/judge/
func BenchmarkWindow(b *testing.B) {
	const maxKeys = 1 << 20
	w := newWindow(30*60*1000, maxKeys)
	rng := rand.New(rand.NewPCG(1, 2))
	now := int64(0)
	for range 3 * maxKeys {
		now++
		w.seen(rng.Uint64(), now, now)
	}
	i := uint64(0)
	for b.Loop() {
		now++
		i++
		k := rng.Uint64()
		if i%4 == 0 {
			k = i
		}
		w.seen(k, now, now)
	}
}
