package judge

import "math"

// countMin is a count-min sketch (Cormode & Muthukrishnan) with conservative
// update and saturating 16-bit counters: a fixed block of memory that counts
// events per key for any number of keys, never undercounting and
// overcounting only where keys collide in every row.
//
// Why a count-min sketch and not a map with eviction: its memory does not
// depend on the key cardinality, and there is nothing to evict. A capped map
// must forget keys when new ones arrive, so an attacker who floods distinct
// keys (cheap: every new IPv6 /48 or user agent is a new key) pushes its own
// busy key out and resets its count. In a sketch a flood of new keys can only
// raise the counters, so the flood's own keys stay counted; the price is a
// small overestimate for everyone, bounded by the sizing (see visitorLogWidth and networkLogWidth).
//
// Conservative update raises only the counters that hold the current
// minimum, which keeps light keys' estimates close to exact far longer than
// incrementing all rows. Counters saturate at math.MaxUint16 instead of
// wrapping, so limits above that are refused by Config.
//
// A countMin is not safe for concurrent use.
//
// The layout is blocked: a key's four counters lie in two 64-byte cache
// lines (two rows of 16 counters each), picked by independent bits of the
// key's hash. Judge touches three sketches per view, and two cache misses
// per key instead of four are much of the rules' speed. Per counter the
// load is that of the classic layout; putting all four rows in one line
// would halve the misses again but make the rows dependent (a light key
// sharing a line with a heavy one would collide with it in every row:
// TestCountMinOverestimate saw thousands of views of overestimate that
// way), while with two lines a key must share both with the same heavy key.
type countMin struct {
	blockMask uint32   // number of cache-line blocks - 1
	cells     []uint16 // (blockMask+1) blocks of cmDepth×rowWidth counters
	// touched lists the keys added since the last reset while there are few
	// of them, so reset zeroes only their cells: a sparse stream (tests,
	// quiet partitions) then does not pay to clear megabytes per bucket.
	touched  []uint64
	overflow bool // touched outgrew maxTouched: reset clears everything
}

// cmDepth rows: the chance that a key collides with heavy keys in every row
// falls geometrically with the depth. Two rows of sixteen 16-bit counters
// fill a 64-byte cache line.
const (
	cmDepth      = 4
	rowWidth     = 16
	rowsPerBlock = 2
	blockSize    = rowsPerBlock * rowWidth
)

// maxTouched bounds the reset log (512 KiB); beyond it a full clear is the
// cheaper reset anyway.
const maxTouched = 1 << 16

// newCountMin returns a sketch of 2^logWidth counters per row (cmDepth
// rows), 2^logWidth × cmDepth × 2 bytes in all. logWidth is at most 23, so
// the hash bits that pick the two blocks and the counters never overlap.
func newCountMin(logWidth uint) *countMin {
	blocks := uint32(1) << (logWidth + 1 - 4) // cmDepth×2^logWidth counters, blockSize = 2^5 each
	return &countMin{blockMask: blocks - 1, cells: make([]uint16, int(blocks)*blockSize)}
}

// index returns the cells of key h, one per row: bits 0-19 and 20-39 of a
// well-mixed 64-bit hash pick the two blocks, bits 40-55 the counter in
// each row's sixteen.
func (c *countMin) index(h uint64) [cmDepth]uint32 {
	a := (uint32(h) & c.blockMask) * blockSize
	b := (uint32(h>>20) & c.blockMask) * blockSize
	p := uint32(h >> 40)
	return [cmDepth]uint32{
		a + p&15,
		a + rowWidth + (p>>4)&15,
		b + (p>>8)&15,
		b + rowWidth + (p>>12)&15,
	}
}

// add counts one event of key h and returns the key's new estimate.
func (c *countMin) add(h uint64) uint16 {
	idx := c.index(h)
	m := uint16(math.MaxUint16)
	for _, i := range idx {
		m = min(m, c.cells[i])
	}
	if m == math.MaxUint16 {
		return m
	}
	if !c.overflow {
		if len(c.touched) < maxTouched {
			c.touched = append(c.touched, h)
		} else {
			c.overflow, c.touched = true, c.touched[:0]
		}
	}
	m++
	for _, i := range idx {
		if c.cells[i] < m {
			c.cells[i] = m
		}
	}
	return m
}

// get returns the estimate for key h without counting.
func (c *countMin) get(h uint64) uint16 {
	m := uint16(math.MaxUint16)
	for _, i := range c.index(h) {
		m = min(m, c.cells[i])
	}
	return m
}

func (c *countMin) reset() {
	if c.overflow {
		clear(c.cells)
	} else {
		for _, h := range c.touched {
			for _, i := range c.index(h) {
				c.cells[i] = 0
			}
		}
	}
	c.touched, c.overflow = c.touched[:0], false
}

// bytes is the sketch's fixed memory.
func (c *countMin) bytes() int { return 2*len(c.cells) + 8*cap(c.touched) }

// bucketCounts counts events per key in time buckets of span milliseconds
// aligned to absolute time (bucket = floor(now / span)), keeping the current
// and the previous bucket: two count-min sketches, swapped and cleared as
// time moves on. Aligning to absolute time, not to the first event seen,
// is what lets a replay that starts anywhere earlier rebuild the same
// buckets. The clock is the rules' latest event time; the sketches are
// allocated on first use, so rules that never reach a stateful check cost
// nothing.
type bucketCounts struct {
	span      int64
	logWidth  uint
	bucket    int64 // index of cur
	cur, prev *countMin
}

func newBucketCounts(span int64, logWidth uint) bucketCounts {
	return bucketCounts{span: span, logWidth: logWidth, bucket: math.MinInt64}
}

// advance moves the current bucket to the one holding now.
func (b *bucketCounts) advance(now int64) {
	if b.cur == nil {
		b.cur, b.prev = newCountMin(b.logWidth), newCountMin(b.logWidth)
	}
	k := floorDiv(now, b.span)
	switch {
	case k <= b.bucket: // the same bucket (a late event never moves it back)
		return
	case k == b.bucket+1:
		b.cur, b.prev = b.prev, b.cur
		b.cur.reset()
	default: // a gap of more than a bucket: nothing recent is left
		b.cur.reset()
		b.prev.reset()
	}
	b.bucket = k
}

// add counts key h at now (the rules' latest event time) and returns its
// count in the current bucket and in the previous one.
func (b *bucketCounts) add(h uint64, now int64) (cur, prev uint16) {
	b.advance(now)
	return b.cur.add(h), b.prev.get(h)
}

// elapsed is how far now lies into the current bucket, in [0, span).
func (b *bucketCounts) elapsed(now int64) int64 { return now - b.bucket*b.span }

func (b *bucketCounts) reset() {
	if b.cur != nil {
		b.cur.reset()
		b.prev.reset()
	}
	b.bucket = math.MinInt64
}

func (b *bucketCounts) bytes() int {
	if b.cur == nil {
		return 0
	}
	return b.cur.bytes() + b.prev.bytes()
}

// mix is the splitmix64 finalizer over x and a per-use tag. Visitor and
// network ids are keyed hashes already, but tests use small integers, the
// low 32 bits of a visitor id are its network's (viewcount.NetworkKey), and
// one sketch holds several kinds of key: mixing spreads them all evenly and
// keeps the kinds apart.
func mix(x, tag uint64) uint64 {
	x ^= tag
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// floorDiv rounds towards minus infinity, so buckets stay aligned for times
// before 1970 too (a zero time.Time is year 1).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}
