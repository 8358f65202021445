package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records durations in log-linear buckets, as HdrHistogram does:
// exact below 128 ns, then 128 buckets per power of two, so a bucket is at
// most 1/128 (0.8 %) of its value wide, from 1 µs to ~68 s (longer values
// land in the top bucket; max stays exact). It is 30 KiB, fixed; histograms
// of workers merge by adding. Not safe for concurrent use.
type Histogram struct {
	counts [histBuckets]uint64
	n      uint64
	sum    time.Duration
	min    time.Duration
	max    time.Duration
}

const (
	subBits     = 7
	subBuckets  = 1 << subBits
	histMaxExp  = 36 // 2^36 ns ≈ 68.7 s
	histBuckets = subBuckets + (histMaxExp-subBits)*subBuckets
)

// bucketOf maps a value in ns to its bucket.
func bucketOf(v uint64) int {
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 1 // v in [2^e, 2^(e+1)), e ≥ subBits
	if e >= histMaxExp {
		return histBuckets - 1
	}
	return subBuckets + (e-subBits)*subBuckets + int(v>>(e-subBits)) - subBuckets
}

// bucketRange is the half-open range [lo, hi) of values in bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < subBuckets {
		return uint64(i), uint64(i) + 1
	}
	e := (i-subBuckets)/subBuckets + subBits
	m := uint64((i-subBuckets)%subBuckets + subBuckets)
	shift := e - subBits
	return m << shift, (m + 1) << shift
}

// Record adds one value; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	d = max(d, 0)
	h.counts[bucketOf(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if d > h.max {
		h.max = d
	}
	h.n++
	h.sum += d
}

// Merge adds o's values to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Since returns what h recorded after earlier, a copy of h taken before:
// the counts of a window of a run. Its max and min are those of its
// highest and lowest bucket (within 0.8 %), the exact ones being lost
// with the values outside the window; its sum is exact.
func (h *Histogram) Since(earlier *Histogram) Histogram {
	var w Histogram
	for i, c := range h.counts {
		d := c - earlier.counts[i]
		if d == 0 {
			continue
		}
		w.counts[i] = d
		lo, hi := bucketRange(i)
		if w.n == 0 {
			w.min = time.Duration(lo)
		}
		w.max = time.Duration(hi - 1)
		if i == histBuckets-1 {
			w.max = h.max
		}
		w.n += d
	}
	w.sum = h.sum - earlier.sum
	if w.n > 0 {
		w.min = max(w.min, h.min)
		w.max = min(w.max, h.max)
	}
	return w
}

// Count is the number of values recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Max is the largest value recorded, exactly.
func (h *Histogram) Max() time.Duration { return h.max }

// Min is the smallest value recorded, exactly.
func (h *Histogram) Min() time.Duration { return h.min }

// Mean is the exact mean.
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}

// Quantile returns the value at quantile q (0 < q ≤ 1): that of rank
// ⌈q·n⌉ in sorted order, as the midpoint of its bucket (within 0.4 %),
// clamped to the exact min and max; the top rank is the exact max.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	if rank == h.n {
		return h.max
	}
	var seen uint64
	for i, c := range h.counts {
		if seen += c; seen >= rank {
			if i == histBuckets-1 { // the overflow bucket has no width
				return h.max
			}
			lo, hi := bucketRange(i)
			v := time.Duration(lo + (hi-lo-1)/2)
			return min(max(v, h.min), h.max)
		}
	}
	return h.max
}
