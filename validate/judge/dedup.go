package judge

import "math/bits"

// window remembers 64-bit keys with the event time (Unix milliseconds) they
// were last seen at, for one rule's window. It is a set-associative hash
// table: a key can live only in the bucket its hash picks, a bucket is
// bucketWays 16-byte slots (two adjacent cache lines, which the hardware
// fetches together), and a key is in the table at most once. Why not Go maps
// (what this was before):
//
//   - One probe. A lookup reads one bucket; the maps needed one lookup per
//     generation (five for a miss, the common case: a new visitor or event
//     id), each a cache miss once the window outgrows the caches. Measured
//     in BenchmarkWindow (docs/benchmarks/README.md, "Rules and the
//     validator").
//   - 16 bytes per key, fixed, instead of ~36 (map slot, control bytes, load
//     factor): the same memory remembers twice the keys.
//   - Expiry costs nothing: a slot older than the window is free for the next
//     key of its bucket, so nothing has to walk the table or drop
//     generations.
//
// The table starts small and doubles, up to maxKeys slots, whenever a key
// finds its bucket full of live keys, so it never forgets a live key before
// it reaches the cap. At the cap a new key takes the slot of the oldest key
// in its bucket: the per-bucket stand-in for "forget the oldest first". A
// bucket holds the last bucketWays keys that hashed to it, so how far back
// the window sees varies a little from bucket to bucket around maxKeys ÷
// the key rate, which is what the cap promises on average.
//
// Everything here is a function of the calls made, never of the wall clock
// or of iteration order, so replays rebuild it exactly; and expired slots
// answer like empty ones, so a replay that starts later (with fewer expired
// slots) still gives the same answers.
//
// A window is not safe for concurrent use.
type window struct {
	width    int64 // the rule's window, ms
	ways     int   // slots per bucket: bucketWays, or fewer for a cap below it
	maxSlots int   // the cap, a whole number of buckets
	slots    []slot
	n        int // occupied slots, live or expired
}

// slot is one remembered key. stamp is the time it was last seen, offset so
// that the zero value means empty: a zeroed table is an empty one, and no
// key value has to be reserved.
type slot struct {
	key   uint64
	stamp uint64
}

const (
	// bucketWays: eight 16-byte slots are 128 bytes, two cache lines that
	// x86 and arm64 prefetch as a pair. Fewer ways would make buckets
	// overflow (and the table grow, or at the cap evict) sooner for the same
	// load; more would make a probe touch more lines.
	bucketWays = 8
	// minBuckets is the first table: 8 KiB, so a quiet partition costs
	// next to nothing.
	minBuckets = 64
	// stampOffset maps math.MinInt64, which no event time can be (UnixMilli
	// of any time.Time is far above it), to the empty stamp 0.
	stampOffset = 1 << 63
)

func toStamp(t int64) uint64   { return uint64(t) + stampOffset }
func fromStamp(s uint64) int64 { return int64(s - stampOffset) }

func newWindow(width int64, maxKeys int) window {
	ways := min(bucketWays, max(1, maxKeys))
	return window{width: width, ways: ways, maxSlots: max(1, maxKeys/ways) * ways}
}

// seen reports whether key was last seen less than the window before now,
// and records that it was seen at t. now is the latest event time the rules
// have seen (t itself unless t arrived late); measuring age from now rather
// than t makes a key's liveness independent of when it was stored, so a
// replay that starts later still gives the same answers.
//
// Every call refreshes the key: the window slides with the last sighting, so
// a key stays remembered for as long as it keeps coming back more often than
// the window. A late t older than the stored time does not move it back.
func (w *window) seen(key uint64, t, now int64) bool {
	if w.slots == nil {
		w.slots = make([]slot, min(w.maxSlots, minBuckets*w.ways))
	}
	b := w.bucket(key)
	for i := range b {
		if s := &b[i]; s.stamp != 0 && s.key == key {
			last := fromStamp(s.stamp)
			if t > last {
				s.stamp = toStamp(t)
			}
			return now-last < w.width
		}
	}
	w.insert(key, t, now)
	return false
}

// bucket returns the slots key may occupy. The multiply spreads keys that
// differ only in low bits (tests use small integers; real keys are already
// hashes) before the high half of a 128-bit product picks the bucket, which
// maps onto any bucket count without a modulo.
func (w *window) bucket(key uint64) []slot {
	i, _ := bits.Mul64(key*0x9E3779B97F4A7C15, uint64(len(w.slots)/w.ways))
	return w.slots[int(i)*w.ways:][:w.ways]
}

// insert stores a key that is not in the table: in an empty or expired slot
// of its bucket if there is one; else, below the cap, in a table twice the
// size; else in place of the bucket's oldest key. Beyond the cap a duplicate
// of an evicted key is counted. That is the price of bounded memory under any
// key cardinality (the design's invariant 5).
func (w *window) insert(key uint64, t, now int64) {
	for {
		b := w.bucket(key)
		oldest := 0
		for i := range b {
			if b[i].stamp == 0 {
				b[i] = slot{key: key, stamp: toStamp(t)}
				w.n++
				return
			}
			if now-fromStamp(b[i].stamp) >= w.width {
				b[i] = slot{key: key, stamp: toStamp(t)}
				return
			}
			if b[i].stamp < b[oldest].stamp {
				oldest = i
			}
		}
		if len(w.slots) == w.maxSlots {
			b[oldest] = slot{key: key, stamp: toStamp(t)}
			return
		}
		w.grow(now)
	}
}

// grow moves the live keys into a table twice the size (at most the cap).
// Expired keys are left behind. The old table is garbage afterwards, so a
// window briefly takes 1.5× its final size while it grows to the cap. Should a bucket of the new table overflow,
// the next size is tried; at the cap the overflow keeps the newest keys.
func (w *window) grow(now int64) {
	old := w.slots
	for size := len(old) / w.ways * 2; ; size *= 2 {
		buckets := min(size, w.maxSlots/w.ways)
		w.slots = make([]slot, buckets*w.ways)
		w.n = 0
		if w.rehash(old, now) || buckets*w.ways == w.maxSlots {
			return
		}
	}
}

// rehash inserts old's live slots into w.slots and reports whether they all
// fit without eviction.
func (w *window) rehash(old []slot, now int64) bool {
	fit := true
	for _, s := range old {
		if s.stamp == 0 || now-fromStamp(s.stamp) >= w.width {
			continue
		}
		b := w.bucket(s.key)
		placed := false
		for i := range b {
			if b[i].stamp == 0 {
				b[i] = s
				w.n++
				placed = true
				break
			}
		}
		if placed {
			continue
		}
		if len(w.slots) < w.maxSlots {
			return false
		}
		fit = false
		oldest := 0
		for i := range b {
			if b[i].stamp < b[oldest].stamp {
				oldest = i
			}
		}
		if s.stamp > b[oldest].stamp {
			b[oldest] = s
		}
	}
	return fit
}

// reset forgets every key and keeps the table: a replay refills it to about
// the same size.
func (w *window) reset() {
	clear(w.slots)
	w.n = 0
}
