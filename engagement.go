package viewcount

import "time"

// VisitDelta is what one verdict changes of its site's visit and
// engagement figures. The validator's visit stage (validate/judge.Visits)
// decides it in stream order, from the verdicts before it, so that every
// rollup of these figures only ever adds: a counted view opens a visit or
// continues one (and so moves the visit's exit page and duration), an
// accepted engagement adds engaged time, scroll depth and visit duration
// to its view and visit. A verdict already stored is never changed by a
// later one; the later one carries the difference instead.
//
// Engagement figures count in the hour and day of the view (ViewTime),
// visit figures in those of the visit's first view (VisitStart), so a
// report arriving after midnight adds to the day its view was counted in.
//
// Zero on every other verdict, and on rows stored before migration 021.
type VisitDelta struct {
	// Set says the stage decided this verdict: a counted view, or an
	// accepted engagement.
	Set        bool
	ViewTime   time.Time // the view's receive time (the event's own for a view)
	VisitStart time.Time // the receive time of the visit's first view

	// The visit's entry: its first view's page and where that view came
	// from, which visit figures are broken down by (a visit's later views
	// come from the site itself).
	EntryPage      string
	EntryRefHost   string
	EntryRefSource string
	EntryUTM       UTM

	// PrevPage is, on a view continuing a visit, the page that was the
	// visit's exit until this view: its exit count moves to this view's
	// page. "" otherwise.
	PrevPage string

	Visits  int8  // +1 on a visit's first view
	Bounces int8  // +1 on a visit's first view; -1 once it stops being a bounce (BounceEngaged)
	VisitMS int32 // change of the visit's duration (first view to last activity), ms

	// EngagedMS is the change of the view's engaged time. EngagedFrom and
	// EngagedTo are its engaged-time bucket (EngagedBucket) before and
	// after, -1 for none (no report accepted yet): a view is in a bucket
	// once its first report is accepted, so histograms count the views
	// that reported, and a median is theirs. ScrollFrom and ScrollTo are
	// the same for scroll depth (ScrollBucket).
	EngagedMS              int32
	EngagedFrom, EngagedTo int8
	ScrollFrom, ScrollTo   int8
}

// Visit and engagement rules (docs/engagement.md).
const (
	// VisitGap: a visitor's view more than this after their last activity
	// on the site (a counted view or an accepted engagement) opens a new
	// visit. Plausible's, Umami's and Google Analytics' 30 minutes.
	VisitGap = 30 * time.Minute
	// BounceEngaged: a one-view visit is a bounce while its view's engaged
	// time is below this; the default EngagedAfter.
	BounceEngaged = 10 * time.Second
	// DefaultEngagedAfter is a site's engaged_after when none is set: the
	// engaged time that makes a view an engaged view.
	DefaultEngagedAfter = 10 * time.Second
	// EngagementHorizon: a report arriving more than this after its view is
	// EngagementLate. It bounds how long a validator keeps a view open.
	EngagementHorizon = time.Hour
	// EngagementSlack: a report may claim this much more engaged time than
	// passed between its view's arrival and its own (the view is sent a
	// frame after the tracker starts counting, and the two requests travel
	// separately) before it is EngagementOverclaim.
	EngagementSlack = 3 * time.Second
	// MaxEngagedMS bounds engaged_ms and age_ms on the wire: a day.
	MaxEngagedMS = 86_400_000
)

// EngagedBuckets are the lower bounds, in seconds, of the engaged-time
// histogram's buckets: bucket i holds views engaged for at least
// EngagedBuckets[i] and less than EngagedBuckets[i+1] seconds, the last one
// an hour and more. Fine where most views are (a median of a few seconds
// is read to the second), coarser beyond; a site's engaged_after is one of
// them (not 0), so an engaged-view count is a sum of whole buckets.
var EngagedBuckets = [...]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15, 20, 25, 30, 40, 45, 50, 60,
	75, 90, 120, 150, 180, 240, 300, 420, 600, 900, 1200, 1800, 2700, 3600}

// EngagedBucket is the bucket of an engaged time of ms milliseconds.
func EngagedBucket(ms uint32) int8 {
	s := ms / 1000
	i := len(EngagedBuckets) - 1
	for EngagedBuckets[i] > s {
		i--
	}
	return int8(i)
}

// ScrollBuckets: scroll depth in steps of ScrollStep percent, bucket i
// holding depths from i*ScrollStep to just below (i+1)*ScrollStep, the
// last exactly 100 %. The shares reaching 25, 50, 75 and 100 % are sums of
// whole buckets.
const (
	ScrollStep    = 5
	ScrollBuckets = 100/ScrollStep + 1
)

// ScrollBucket is the bucket of a scroll depth in percent (above 100 is
// 100).
func ScrollBucket(pct uint8) int8 {
	return int8(min(pct, 100) / ScrollStep)
}

// Histogram is an engaged-time or scroll-depth histogram as the rollups
// sum it: views by bucket index (EngagedBucket, ScrollBucket). Counts are
// sums of +1 and -1 deltas, so a partial sum may be negative; a whole
// one never is.
type Histogram map[int8]int64

// Total is the number of views in h: those that reported.
func (h Histogram) Total() int64 {
	var n int64
	for _, c := range h {
		n += max(c, 0)
	}
	return n
}

// EngagedAtLeast counts the views of an engaged-time histogram engaged for
// at least d (a bucket bound, as a site's engaged_after is: CheckEngagedAfter).
func (h Histogram) EngagedAtLeast(d time.Duration) int64 {
	var n int64
	for i, c := range h {
		if int(i) < len(EngagedBuckets) && time.Duration(EngagedBuckets[i])*time.Second >= d {
			n += max(c, 0)
		}
	}
	return n
}

// EngagedMedian is the median engaged time of an engaged-time histogram,
// interpolated within its bucket (so exact to the bucket's width: a
// second up to 10 s, 5 s up to 30 s, …); 0 when no view reported. The
// last bucket, an hour and more, counts as an hour.
func (h Histogram) EngagedMedian() time.Duration {
	ms := h.median(len(EngagedBuckets), func(i int) (lo, hi float64) {
		lo = float64(EngagedBuckets[i]) * 1000
		if i+1 < len(EngagedBuckets) {
			return lo, float64(EngagedBuckets[i+1]) * 1000
		}
		return lo, lo
	})
	return time.Duration(ms) * time.Millisecond
}

// ScrollMedian is the median scroll depth of a scroll histogram in
// percent, interpolated within its 5 % bucket; 0 when no view reported.
func (h Histogram) ScrollMedian() float64 {
	return h.median(ScrollBuckets, func(i int) (lo, hi float64) {
		lo = float64(i * ScrollStep)
		return lo, min(lo+ScrollStep, 100)
	})
}

// ScrollReached is the share (0-1) of a scroll histogram's views that
// reached pct percent of the page (a multiple of ScrollStep); 0 when none
// reported.
func (h Histogram) ScrollReached(pct int) float64 {
	total := h.Total()
	if total == 0 {
		return 0
	}
	var n int64
	for i, c := range h {
		if int(i)*ScrollStep >= pct {
			n += max(c, 0)
		}
	}
	return float64(n) / float64(total)
}

// median finds the bucket holding the middle view and interpolates
// linearly within its bounds.
func (h Histogram) median(buckets int, bounds func(i int) (lo, hi float64)) float64 {
	total := h.Total()
	if total == 0 {
		return 0
	}
	half := float64(total) / 2
	var seen float64
	for i := range buckets {
		c := float64(max(h[int8(i)], 0))
		if c == 0 {
			continue
		}
		if seen+c >= half {
			lo, hi := bounds(i)
			return lo + (hi-lo)*(half-seen)/c
		}
		seen += c
	}
	lo, _ := bounds(buckets - 1)
	return lo
}
