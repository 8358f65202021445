package validate

import (
	"strconv"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

// TickHeader marks a tick: an empty message a validator publishes to its own
// partition when it holds verdicts and the partition is quiet. Its value is
// the publisher's clock in Unix milliseconds. Ticks are part of the stream,
// so a replay sees them at the same place and releases held verdicts at the
// same point: holding stays a function of the stream.
const TickHeader = "Viewcount-Tick"

// holdQueue keeps the valid verdicts of watched events (a visitor or network
// busy enough that it may turn out to be a flood or a farm) for the settle
// window, then releases them through judge.Rules.Settle: a view counted only once
// the next minutes of its visitor and network are known. Everything else is
// written at once. Release is driven by the partition's watermark, the
// latest event or tick time in the stream, never by the wall clock.
type holdQueue struct {
	window int64 // settle window, ms
	// max bounds the held verdicts (judge.Config.MaxHeld). Watched traffic
	// beyond it (busy carrier networks at high volume) is settled early,
	// oldest first: with what is known by then, as a replay would do at the
	// same stream position, so the bound costs accuracy at the margin,
	// never determinism.
	max  int
	mark int64 // watermark, Unix ms
	// items are the held verdicts in arrival order, packed (packed.go):
	// their strings in arena, in the same order.
	items []packedVerdict
	arena []byte
	head  int              // items[:head] are released
	locs  []*time.Location // time zones other than UTC and Local, for packedVerdict.loc
	// views counts the held views by site and event id (heldKey), so an
	// engagement report for one of them is held behind it and judged once
	// the view's verdict is final (docs/engagement.md).
	views map[uint64]int32
	buf   []byte
}

func (q *holdQueue) observe(t int64) { q.mark = max(q.mark, t) }

func (q *holdQueue) push(v viewcount.Verdict) {
	if v.Kind == viewcount.KindView {
		if q.views == nil {
			q.views = map[uint64]int32{}
		}
		q.views[q.key(&v.Event)]++
	}
	q.pack(&v)
}

// holds reports whether the view an engagement report names is held.
func (q *holdQueue) holds(e *viewcount.Event) bool {
	return len(q.views) > 0 && q.views[q.key(e)] > 0
}

func (q *holdQueue) key(e *viewcount.Event) uint64 {
	b := append(q.buf[:0], e.Site...)
	b = append(b, 0)
	b = append(b, e.ID...)
	q.buf = b
	return xxhash.Sum64(b)
}

// release appends to out, settled and in arrival order, the held verdicts
// from the front whose window the watermark has passed, and any beyond
// q.max. Event times within a partition are nearly in order, so looking
// only at the front costs a verdict stuck behind a later one a few
// milliseconds, and keeps a release proportional to what it releases.
func (q *holdQueue) release(out []viewcount.Verdict, settle func(*viewcount.Verdict)) []viewcount.Verdict {
	for q.head < len(q.items) {
		p := &q.items[q.head]
		if p.unixMilli()+q.window > q.mark && len(q.items)-q.head <= q.max {
			break
		}
		out = append(out, viewcount.Verdict{})
		v := &out[len(out)-1]
		q.unpack(p, v)
		if v.Kind == viewcount.KindView {
			settle(v)
			if k := q.key(&v.Event); q.views[k] > 1 {
				q.views[k]--
			} else {
				delete(q.views, k)
			}
		}
		q.head++
	}
	if q.head == len(q.items) {
		q.items, q.arena, q.head = q.items[:0], q.arena[:0], 0
	} else if q.head > len(q.items)/2 {
		cut := q.items[q.head].off
		q.arena = q.arena[:copy(q.arena, q.arena[cut:])]
		n := copy(q.items, q.items[q.head:])
		q.items, q.head = q.items[:n], 0
		for i := range q.items {
			q.items[i].off -= cut
		}
	}
	return out
}

// bySite counts the held verdicts by site and page, and by site under
// page "" (nil when none are held).
func (q *holdQueue) bySite() map[viewcount.PendingKey]uint64 {
	if q.held() == 0 {
		return nil
	}
	out := map[viewcount.PendingKey]uint64{}
	names := map[string]string{} // one string per distinct site or page
	for i := q.head; i < len(q.items); i++ {
		p := &q.items[i]
		if p.s.kind != viewcount.KindView {
			continue // a held report is no pending view
		}
		site, page := intern(names, q.field(p, fieldSite)), intern(names, q.field(p, fieldPage))
		out[viewcount.PendingKey{Site: site, Page: page}]++
		out[viewcount.PendingKey{Site: site}]++
	}
	return out
}

// sinceBySite is the receive time of the oldest held verdict of each site
// (nil when none are held), for how far the site's counting is behind.
func (q *holdQueue) sinceBySite() map[string]time.Time {
	if q.held() == 0 {
		return nil
	}
	out := map[string]time.Time{}
	for i := q.head; i < len(q.items); i++ {
		p := &q.items[i]
		if p.s.kind != viewcount.KindView {
			continue
		}
		site := q.field(p, fieldSite)
		if o, ok := out[string(site)]; !ok || p.time(q.locs, 0).Before(o) {
			out[string(site)] = p.time(q.locs, 0)
		}
	}
	return out
}

func intern(names map[string]string, b []byte) string {
	if s, ok := names[string(b)]; ok {
		return s
	}
	s := string(b)
	names[s] = s
	return s
}

// held is how many verdicts wait.
func (q *holdQueue) held() int { return len(q.items) - q.head }

// due reports whether a held verdict's window has passed by the clock now:
// then a quiet partition needs a tick to release it.
func (q *holdQueue) due(now time.Time) bool {
	return q.held() > 0 && q.items[q.head].unixMilli()+q.window < now.UnixMilli()
}

// tickTime returns the time of a tick message, or false for an event batch.
func tickTime(msg jetstream.Msg) (int64, bool) {
	h := msg.Headers().Get(TickHeader)
	if h == "" {
		return 0, false
	}
	t, err := strconv.ParseInt(h, 10, 64)
	return t, err == nil
}
