package judge

import (
	"cmp"
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

// The state holds no pointers but the names table: open views, visits and
// both maps are memory the garbage collector does not scan. At 20k views/s
// they held ~100 MB of visit structs and their strings, which every mark
// phase walked (docs/benchmarks/history/issue-25.md, "Held verdicts and
// visits without pointers").

// openView is a counted view a report may still name.
type openView struct {
	at      int64 // receive time, Unix ms
	visitor uint64
	page    uint64 // xxhash of the page: a report must name the view's own
	visit   int32  // its visit in visitState.slab
	screenW uint16 // the view's hints, lent to its reports' dimensions
	screenH uint16
	hints   bool
	// What the accepted reports said so far: cumulative maxima.
	engaged  uint32
	scroll   uint8
	reported bool
}

// visit is a visitor's run of counted views on one site (VisitGap). Its
// strings are names: indexes into visitState.names.
type visit struct {
	start, last int64 // first view's time; last activity's (view or report)
	day         int64 // UTC day of the first view: a visit never spans midnight
	dur         int64 // duration recorded so far, ms
	entry       uint32
	refHost     uint32
	refSource   uint32
	utm         [3]uint32 // source, medium, campaign
	lastPage    uint32
	views       int32
	// refs counts who names the visit: the visits map (while it is the
	// visitor's current visit) and each of its open views (whose reports
	// still extend it after it is swept). At 0 its place is reused.
	refs    int32
	bounced bool // counted as a bounce so far
}

// named is every name a visit keeps.
func (vis *visit) named() [7]*uint32 {
	return [...]*uint32{&vis.entry, &vis.refHost, &vis.refSource, &vis.utm[0], &vis.utm[1], &vis.utm[2], &vis.lastPage}
}

type openKey struct {
	key uint64
	at  int64
}

type visitState struct {
	horizon, gap, slack, bounce int64 // ms
	maxViews, maxVisits         int
	views                       map[uint64]openView // by Rules.idKey, the retry window's key
	order                       []openKey           // views by arrival, for expiry; order[head:] live
	head                        int
	visits                      map[uint64]int32 // by visitKey, the visitor's current visit in slab
	slab                        []visit
	free                        []int32 // places in slab no one names
	names                       names
	nextSweep                   int64
	now                         int64
	buf                         []byte
}

func newVisitState(cfg Config) visitState {
	return visitState{
		horizon: cfg.EngagementHorizon.Milliseconds(), gap: viewcount.VisitGap.Milliseconds(),
		slack: viewcount.EngagementSlack.Milliseconds(), bounce: viewcount.BounceEngaged.Milliseconds(),
		maxViews: cfg.MaxOpenViews, maxVisits: cfg.MaxVisits,
		views: map[uint64]openView{}, visits: map[uint64]int32{},
		now: math.MinInt64, nextSweep: math.MinInt64,
	}
}

func (s *visitState) reset() {
	clear(s.views)
	clear(s.visits)
	s.order, s.head = s.order[:0], 0
	s.slab, s.free = s.slab[:0], s.free[:0]
	s.names.reset()
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
	i, ok := s.visits[vk]
	if ok && t-s.slab[i].last <= s.gap && utcDay(t) == s.slab[i].day {
		vis := &s.slab[i]
		d.PrevPage = s.names.get(vis.lastPage)
		vis.views++
		if vis.bounced {
			// A second view: not a bounce, whatever its engagement.
			vis.bounced = false
			d.Bounces = -1
		}
		vis.lastPage = s.names.id(v.Page)
		vis.last = max(vis.last, t)
		d.VisitMS = vis.extend(t)
	} else {
		host, source := r.sources.referrerDims(&v.Event)
		page := s.names.id(v.Page)
		i = s.alloc(visit{start: t, last: t, day: utcDay(t), entry: page, refHost: s.names.id(host), refSource: s.names.id(source),
			utm:      [3]uint32{s.names.id(v.UTM.Source), s.names.id(v.UTM.Medium), s.names.id(v.UTM.Campaign)},
			lastPage: page, views: 1, bounced: true})
		d.Visits, d.Bounces = 1, 1
		if _, ok := s.visits[vk]; ok || s.room() {
			if old, ok := s.visits[vk]; ok {
				s.unref(old)
			}
			s.visits[vk] = i
			s.slab[i].refs++
		}
	}
	s.entry(&d, i, v)
	v.Visit = d
	s.open(r.idKey(&v.Event), openView{at: t, visitor: v.Visitor, page: xxhash.Sum64String(v.Page),
		screenW: v.Hints.ScreenW, screenH: v.Hints.ScreenH, hints: v.Hints.Present, visit: i})
}

// entry sets d's visit start and entry from visit i.
func (s *visitState) entry(d *viewcount.VisitDelta, i int32, v *viewcount.Verdict) {
	vis := &s.slab[i]
	d.VisitStart = msTime(vis.start, v)
	d.EntryPage, d.EntryRefHost, d.EntryRefSource = s.names.get(vis.entry), s.names.get(vis.refHost), s.names.get(vis.refSource)
	d.EntryUTM = viewcount.UTM{Source: s.names.get(vis.utm[0]), Medium: s.names.get(vis.utm[1]), Campaign: s.names.get(vis.utm[2])}
}

// engage judges an engagement report against its open view and, if it is
// accepted, records what it adds.
func (r *Rules) engage(v *viewcount.Verdict, t int64) viewcount.Reason {
	s := &r.visits
	if int64(v.Engagement.AgeMS) > s.horizon {
		return viewcount.EngagementLate
	}
	key := r.idKey(&v.Event)
	ov, ok := s.views[key]
	if !ok || ov.visitor != v.Visitor || ov.page != xxhash.Sum64String(v.Page) {
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
	s.views[key] = ov
	vis := &s.slab[ov.visit]
	if vis.bounced && vis.views == 1 && int64(engaged) >= s.bounce {
		vis.bounced = false
		d.Bounces = -1
	}
	vis.last = max(vis.last, t)
	d.VisitMS = vis.extend(t)
	s.entry(&d, ov.visit, v)
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
func (s *visitState) open(key uint64, ov openView) {
	s.slab[ov.visit].refs++ // first: the view it takes over may name the same visit
	if old, ok := s.views[key]; ok {
		s.unref(old.visit)
	} else if len(s.views) >= s.maxViews {
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
		s.unref(ov.visit)
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
	for k, i := range s.visits {
		if vis := &s.slab[i]; vis.last+s.gap < s.now || vis.day != today {
			delete(s.visits, k)
			s.unref(i)
		}
	}
	s.nextSweep = s.now + max(1, s.gap/8)
	s.names.collect(s.slab)
}

// alloc places a visit in the slab, in a free place if there is one.
func (s *visitState) alloc(vis visit) int32 {
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.slab[i] = vis
		return i
	}
	s.slab = append(s.slab, vis)
	return int32(len(s.slab) - 1)
}

// unref drops one name of visit i, freeing its place at the last.
func (s *visitState) unref(i int32) {
	if s.slab[i].refs--; s.slab[i].refs == 0 {
		s.slab[i] = visit{}
		s.free = append(s.free, i)
	}
}

// names interns the visit stage's strings (pages, referrer hosts and
// sources, campaign values) so a visit keeps ids instead: it holds no
// pointers, and the table holds each distinct string once. Id 0 is "".
type names struct {
	strs []string // by id; strs[0] is ""
	ids  map[string]uint32
	kept int // len(strs) after the last collection
	// from is the size below which collect leaves the table alone:
	// namesFrom, lowered by tests.
	from int
}

// namesFrom: a table of up to a thousand names (pages, sources, campaign
// values of a small site) is never walked.
const namesFrom = 1024

func (n *names) id(s string) uint32 {
	if s == "" {
		return 0
	}
	if i, ok := n.ids[s]; ok {
		return i
	}
	if n.ids == nil {
		n.ids = map[string]uint32{}
	}
	if len(n.strs) == 0 {
		n.strs = append(n.strs, "")
	}
	n.strs = append(n.strs, s)
	n.ids[s] = uint32(len(n.strs) - 1)
	return uint32(len(n.strs) - 1)
}

func (n *names) get(i uint32) string {
	if i == 0 {
		return ""
	}
	return n.strs[i]
}

func (n *names) reset() {
	clear(n.strs)
	n.strs, n.kept = n.strs[:0], 0
	clear(n.ids)
}

// collect forgets the names no visit in slab uses, once the table has
// doubled since the last collection, so its walk of the slab is paid once
// per doubling. Free places in slab are zero: they name only "".
func (n *names) collect(slab []visit) {
	if len(n.strs) < cmp.Or(n.from, namesFrom) || len(n.strs) < 2*n.kept {
		return
	}
	remap := make([]uint32, len(n.strs)) // old id to new, 0 while unseen
	strs := make([]string, 1, len(n.strs)/2+1)
	clear(n.ids)
	move := func(id *uint32) {
		if *id == 0 {
			return
		}
		if remap[*id] == 0 {
			strs = append(strs, n.strs[*id])
			remap[*id] = uint32(len(strs) - 1)
			n.ids[n.strs[*id]] = remap[*id]
		}
		*id = remap[*id]
	}
	for i := range slab {
		for _, id := range slab[i].named() {
			move(id)
		}
	}
	n.strs, n.kept = strs, len(strs)
}
