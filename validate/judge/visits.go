package judge

import (
	"encoding/binary"
	"math"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/viewcount/viewcount"
)

// The visit stage. It runs after the rules and settling, over the final
// verdicts in the order they are written (Rules.Visit), and decides for
// each counted view and each engagement report what it changes of its
// site's visit and engagement figures (viewcount.VisitDelta): which visit
// the view opens or continues, which exit page moves, how much engaged
// time, scroll depth and visit duration a report adds. An engagement's own
// verdict is decided here too, against the view it names. Like the rules,
// it is a function of the verdicts fed to it, clocked by their own times,
// so a replay rebuilds it (ReplayStart says from where).
//
// Its state is bounded: open views (those a report may still name, up to
// EngagementHorizon after the view) and live visits are capped
// (Config.MaxOpenViews, MaxVisits). The oldest open view is forgotten
// first (its later reports are orphans); a visit that finds the visit
// table full is not remembered, so each of its later views opens a visit
// of its own. Both are deterministic, so a replay reaches the same rows.

// openView is a counted view a report may still name.
type openView struct {
	at      int64 // receive time, Unix ms
	visitor uint64
	page    uint64 // xxhash of the page: a report must name the view's own
	screenW uint16 // the view's hints, lent to its reports' dimensions
	screenH uint16
	hints   bool
	visit   *visit
	// What the accepted reports said so far: cumulative maxima.
	engaged  uint32
	scroll   uint8
	reported bool
}

// visit is a visitor's run of counted views on one site (VisitGap).
type visit struct {
	start, last int64 // first view's time; last activity's (view or report)
	day         int64 // UTC day of the first view: a visit never spans midnight
	entry       string
	refHost     string
	refSource   string
	utm         viewcount.UTM
	lastPage    string
	views       int32
	dur         int64 // duration recorded so far, ms
	bounced     bool  // counted as a bounce so far
}

type openKey struct {
	key uint64
	at  int64
}

type visitState struct {
	horizon, gap, slack, bounce int64 // ms
	maxViews, maxVisits         int
	views                       map[uint64]*openView // by Rules.idKey, the retry window's key
	order                       []openKey            // views by arrival, for expiry; order[head:] live
	head                        int
	visits                      map[uint64]*visit
	nextSweep                   int64
	now                         int64
	buf                         []byte
}

func newVisitState(cfg Config) visitState {
	return visitState{
		horizon: cfg.EngagementHorizon.Milliseconds(), gap: viewcount.VisitGap.Milliseconds(),
		slack: viewcount.EngagementSlack.Milliseconds(), bounce: viewcount.BounceEngaged.Milliseconds(),
		maxViews: cfg.MaxOpenViews, maxVisits: cfg.MaxVisits,
		views: map[uint64]*openView{}, visits: map[uint64]*visit{},
		now: math.MinInt64, nextSweep: math.MinInt64,
	}
}

func (s *visitState) reset() {
	clear(s.views)
	clear(s.visits)
	s.order, s.head = s.order[:0], 0
	s.now, s.nextSweep = math.MinInt64, math.MinInt64
}

const msPerDay = 24 * 60 * 60 * 1000

func utcDay(ms int64) int64 {
	d := ms / msPerDay
	if ms%msPerDay < 0 {
		d--
	}
	return d
}

// Visit decides v.Visit for a final verdict, and v.Reason for an
// engagement report (which the rules never judge: validate passes it here
// with an empty reason, after its view when the view was held). Call it
// for every verdict, in the order they are written, rejected views
// included (they change nothing, but advance the clock).
func (r *Rules) Visit(v *viewcount.Verdict) {
	s := &r.visits
	t := v.Time.UnixMilli()
	if t > s.now {
		s.now = t
	}
	s.expire()
	if v.Kind == viewcount.KindEngagement {
		v.Reason = r.engage(v, t)
		return
	}
	if v.Reason != viewcount.Valid {
		return
	}
	r.view(v, t)
}

// view opens or continues the visit of a counted view and opens the view
// for its reports.
func (r *Rules) view(v *viewcount.Verdict, t int64) {
	s := &r.visits
	vk := s.visitKey(v)
	d := viewcount.VisitDelta{Set: true, ViewTime: v.Time, EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
	vis := s.visits[vk]
	if vis != nil && t-vis.last <= s.gap && utcDay(t) == vis.day {
		d.PrevPage = vis.lastPage
		vis.views++
		if vis.bounced {
			// A second view: not a bounce, whatever its engagement.
			vis.bounced = false
			d.Bounces = -1
		}
		vis.lastPage = v.Page
		vis.last = max(vis.last, t)
		d.VisitMS = vis.extend(t)
	} else {
		host, source := r.sources.referrerDims(&v.Event)
		vis = &visit{start: t, last: t, day: utcDay(t), entry: v.Page, refHost: host, refSource: source,
			utm: v.UTM, lastPage: v.Page, views: 1, bounced: true}
		d.Visits, d.Bounces = 1, 1
		if _, ok := s.visits[vk]; ok || s.room() {
			s.visits[vk] = vis
		}
	}
	d.VisitStart = msTime(vis.start, v)
	d.EntryPage, d.EntryRefHost, d.EntryRefSource, d.EntryUTM = vis.entry, vis.refHost, vis.refSource, vis.utm
	v.Visit = d
	s.open(r.idKey(&v.Event), &openView{at: t, visitor: v.Visitor, page: xxhash.Sum64String(v.Page),
		screenW: v.Hints.ScreenW, screenH: v.Hints.ScreenH, hints: v.Hints.Present, visit: vis})
}

// engage judges an engagement report against its open view and, if it is
// accepted, records what it adds.
func (r *Rules) engage(v *viewcount.Verdict, t int64) viewcount.Reason {
	s := &r.visits
	if int64(v.Engagement.AgeMS) > s.horizon {
		return viewcount.EngagementLate
	}
	ov := s.views[r.idKey(&v.Event)]
	if ov == nil || ov.visitor != v.Visitor || ov.page != xxhash.Sum64String(v.Page) {
		return viewcount.EngagementOrphan
	}
	elapsed := t - ov.at
	switch {
	case elapsed > s.horizon:
		return viewcount.EngagementLate
	case int64(v.Engagement.EngagedMS) > elapsed+s.slack:
		return viewcount.EngagementOverclaim
	case ov.reported && v.Engagement.EngagedMS <= ov.engaged && v.Engagement.Scroll <= ov.scroll:
		return viewcount.EngagementRepeat
	}
	engaged, scroll := max(ov.engaged, v.Engagement.EngagedMS), max(ov.scroll, min(v.Engagement.Scroll, 100))
	d := viewcount.VisitDelta{Set: true, ViewTime: msTime(ov.at, v), EngagedFrom: -1, ScrollFrom: -1,
		EngagedMS: int32(engaged - ov.engaged), EngagedTo: viewcount.EngagedBucket(engaged), ScrollTo: viewcount.ScrollBucket(scroll)}
	if ov.reported {
		d.EngagedFrom, d.ScrollFrom = viewcount.EngagedBucket(ov.engaged), viewcount.ScrollBucket(ov.scroll)
	}
	ov.engaged, ov.scroll, ov.reported = engaged, scroll, true
	vis := ov.visit
	if vis.bounced && vis.views == 1 && int64(engaged) >= s.bounce {
		vis.bounced = false
		d.Bounces = -1
	}
	vis.last = max(vis.last, t)
	d.VisitMS = vis.extend(t)
	d.VisitStart = msTime(vis.start, v)
	d.EntryPage, d.EntryRefHost, d.EntryRefSource, d.EntryUTM = vis.entry, vis.refHost, vis.refSource, vis.utm
	v.Visit = d
	// The report carries no hints; its screen class is its view's.
	if ov.hints && !v.Hints.Present {
		v.Hints = viewcount.Hints{Present: true, ScreenW: ov.screenW, ScreenH: ov.screenH}
	}
	return viewcount.Valid
}

// extend stretches the visit's duration to activity at t and returns by
// how much.
func (vis *visit) extend(t int64) int32 {
	dur := max(vis.dur, t-vis.start)
	d := dur - vis.dur
	vis.dur = dur
	return int32(min(d, math.MaxInt32))
}

// msTime is Unix ms as a time in v's location (UTC).
func msTime(ms int64, v *viewcount.Verdict) time.Time {
	return time.UnixMilli(ms).In(v.Time.Location())
}

// visitKey is the key of a visitor's visit on a site.
func (s *visitState) visitKey(v *viewcount.Verdict) uint64 {
	b := binary.LittleEndian.AppendUint64(s.buf[:0], v.Visitor)
	b = append(b, v.Site...)
	s.buf = b
	return xxhash.Sum64(b)
}

// open remembers a counted view for its reports, forgetting the oldest
// open view when the table is full. A view id seen again (a retry outside
// the retry window) takes the entry over.
func (s *visitState) open(key uint64, ov *openView) {
	if _, ok := s.views[key]; !ok && len(s.views) >= s.maxViews {
		s.evictOldest()
	}
	s.views[key] = ov
	s.order = append(s.order, openKey{key: key, at: ov.at})
}

// expire forgets the open views past the horizon and, every so often, the
// visits that can neither grow nor be reported on any more.
func (s *visitState) expire() {
	// Kept a sixth of the horizon past it, so a report that comes a little
	// late is told so (EngagementLate) rather than called an orphan.
	for s.head < len(s.order) && s.order[s.head].at+s.horizon+s.horizon/6 < s.now {
		s.drop(s.order[s.head])
	}
	s.compact()
	if s.now >= s.nextSweep && len(s.visits) > 0 {
		s.sweep()
	}
}

func (s *visitState) evictOldest() {
	for s.head < len(s.order) {
		k := s.order[s.head]
		if ov, ok := s.views[k.key]; ok && ov.at == k.at {
			s.drop(k)
			return
		}
		s.head++
	}
}

// drop removes order[head] and its view, unless the key was taken over by
// a later view (whose own entry comes later in order).
func (s *visitState) drop(k openKey) {
	if ov, ok := s.views[k.key]; ok && ov.at == k.at {
		delete(s.views, k.key)
	}
	s.order[s.head] = openKey{}
	s.head++
}

func (s *visitState) compact() {
	if s.head == len(s.order) {
		s.order, s.head = s.order[:0], 0
	} else if s.head > 1024 && s.head > len(s.order)/2 {
		n := copy(s.order, s.order[s.head:])
		s.order, s.head = s.order[:n], 0
	}
}

// room reports whether a new visit may be remembered: always below the
// cap; at the cap only if a sweep frees a place.
func (s *visitState) room() bool {
	if len(s.visits) < s.maxVisits {
		return true
	}
	s.sweep()
	return len(s.visits) < s.maxVisits
}

// sweep forgets the visits no view can continue any more (the gap passed,
// or their day did). Their open views keep them for their reports. Sweeps
// run at most every gap/8 of stream time, so a full table of live visits
// costs a walk per eighth of the gap, not one per view.
func (s *visitState) sweep() {
	if s.now < s.nextSweep {
		return
	}
	today := utcDay(s.now)
	for k, vis := range s.visits {
		if vis.last+s.gap < s.now || vis.day != today {
			delete(s.visits, k)
		}
	}
	s.nextSweep = s.now + max(1, s.gap/8)
}
