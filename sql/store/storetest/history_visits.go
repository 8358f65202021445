package storetest

import (
	"time"

	"github.com/viewcount/viewcount"
)

// report gives a valid view v the delta of a one-view visit and, for
// about half of them, returns an engagement report of it in the same
// message (index 1), received up to half an hour later: engaged for part
// of that time, the visit as long as the time, no bounce from 10 s
// engaged. One report in ten is rejected as engagement_repeat and
// changes nothing.
func (g *generator) report(v *viewcount.Verdict) (viewcount.Verdict, bool) {
	if v.Reason != viewcount.Valid {
		return viewcount.Verdict{}, false
	}
	d := viewcount.VisitDelta{Set: true, ViewTime: v.Time, VisitStart: v.Time, EntryPage: v.Page,
		EntryRefHost: v.Dims.RefHost, EntryRefSource: v.Dims.RefSource, EntryUTM: v.UTM,
		EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
	v.Visit = d
	v.Visit.Visits, v.Visit.Bounces = 1, 1
	rng := g.vrng
	if rng.IntN(2) == 0 {
		return viewcount.Verdict{}, false
	}
	after := time.Duration(1+rng.Int64N(1800_000)) * time.Millisecond
	engaged := uint32(rng.Int64N(after.Milliseconds() + 1))
	scroll := uint8(rng.IntN(101))
	r := *v
	r.Kind, r.Index, r.ID = viewcount.KindEngagement, 1, v.ID
	r.Time = v.Time.Add(after)
	r.Engagement = viewcount.Engagement{EngagedMS: engaged, Scroll: scroll, AgeMS: uint32(after.Milliseconds())}
	r.Visit = d
	if rng.IntN(10) == 0 {
		r.Reason, r.Visit = viewcount.EngagementRepeat, viewcount.VisitDelta{}
		return r, true
	}
	r.Visit.VisitMS, r.Visit.EngagedMS = int32(after.Milliseconds()), int32(engaged)
	r.Visit.EngagedTo, r.Visit.ScrollTo = viewcount.EngagedBucket(engaged), viewcount.ScrollBucket(scroll)
	if time.Duration(engaged)*time.Millisecond >= viewcount.BounceEngaged {
		r.Visit.Bounces = -1
	}
	return r, true
}
