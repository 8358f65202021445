package judge

import (
	"math"
	"time"

	"github.com/viewcount/viewcount"
)

// Settling. A rate limit or a rotation threshold proves a flood or a farm
// only once it is crossed, and an online counter would have counted every
// view before that: a flood's first 30 views a minute, a farm's first 50
// user agents. So valid views of *watched* keys (a visitor already at a
// sixth of its rate limit, a network busy enough to be tracked for rotation)
// are held for the settle window and then settled: rejected after all if
// their visitor or network was flagged in the meantime. Other views, nearly
// all of them, are written at once.
//
// Holding is decided by the rules (Watched) and released by validate's
// consumer against the stream's own clock (event and tick times, its
// holdQueue), so settling is as deterministic as judging: a replay holds
// and releases the same views at the same stream positions.

// flagCap bounds each flag map: flags are raised by floods and farms only,
// so this is thousands of concurrent attacks per partition.
const flagCap = 1 << 16

type netFlag struct {
	at     int64 // event time the flag was (last) raised, Unix ms
	reason viewcount.Reason
}

// flags remembers which visitors and networks were over a limit, and when.
type flags struct {
	visitors map[uint64]int64
	networks map[uint64]netFlag
	horizon  int64 // flags older than this much before now may be dropped
	// A full map is swept (walked for expired flags) at most once per
	// horizon/8 of event time, and not before its oldest flag can have
	// expired: walking a map full of live flags for every new one made a
	// flood of distinct visitors quadratic (65,536 entries walked per
	// view). In between, a full map refuses new flags, as it does when
	// every flag is live.
	nextVisitorSweep, nextNetworkSweep int64
}

func newFlags(horizon time.Duration) flags {
	return flags{visitors: map[uint64]int64{}, networks: map[uint64]netFlag{}, horizon: horizon.Milliseconds(),
		nextVisitorSweep: math.MinInt64, nextNetworkSweep: math.MinInt64}
}

func (f *flags) visitor(v uint64, now int64) {
	if room(f, f.visitors, v, &f.nextVisitorSweep, func(at int64) int64 { return at }, now) {
		f.visitors[v] = now
	}
}

func (f *flags) network(n uint64, now int64, r viewcount.Reason) {
	if room(f, f.networks, n, &f.nextNetworkSweep, func(nf netFlag) int64 { return nf.at }, now) {
		f.networks[n] = netFlag{at: now, reason: r}
	}
}

// room reports whether key may be (re)flagged in m at now: always while m
// is below flagCap or already holds key; when m is full, only if a sweep is
// due (*next) and frees a place. A sweep deletes the flags older than the
// horizon and schedules the next one: not before the oldest remaining flag
// can expire (flags raised later are newer), nor within horizon/8.
func room[T any](f *flags, m map[uint64]T, key uint64, next *int64, at func(T) int64, now int64) bool {
	if len(m) < flagCap {
		return true
	}
	if _, ok := m[key]; ok {
		return true
	}
	if now < *next {
		return false // full of live flags: first come, first served
	}
	oldest := now
	for k, v := range m {
		if t := at(v); t < now-f.horizon {
			delete(m, k)
		} else {
			oldest = min(oldest, t)
		}
	}
	*next = max(oldest+f.horizon, now+max(1, f.horizon/8))
	return len(m) < flagCap
}

func (f *flags) reset() {
	clear(f.visitors)
	clear(f.networks)
	f.nextVisitorSweep, f.nextNetworkSweep = math.MinInt64, math.MinInt64
}

// raise records the flags the last Judge found (rate: visitor and/or
// network over its limit; rotating: network rotating user agents). Only
// Settle reads them, so with settling off there is nothing to record.
func (r *Rules) raise(e *viewcount.Event, rotating bool) {
	if r.cfg.SettleWindow < 0 {
		return
	}
	if r.rate.lastVisitor > r.rate.visitorLimit {
		r.flags.visitor(e.Visitor, r.now)
	}
	switch {
	case e.Network == 0:
	case rotating:
		r.flags.network(e.Network, r.now, viewcount.NetworkRotation)
	case r.rate.lastNetwork > r.rate.networkLimit:
		r.flags.network(e.Network, r.now, viewcount.Rate)
	}
	// A /32 flooding a page: its block key shares the network flags (a
	// 64-bit hash of another input; the two never meet).
	if r.lastBlockKey != 0 && r.rate.lastBlock > r.rate.blockLimit {
		r.flags.network(r.lastBlockKey, r.now, viewcount.Rate)
	}
}

// Watched reports whether the event Judge just called Valid belongs to a
// visitor or network that may yet prove a flood or a farm: its view should
// be held for SettleWindow and settled. Call it right after Judge(e).
func (r *Rules) Watched(e *viewcount.Event) bool {
	if r.cfg.SettleWindow < 0 {
		return false
	}
	return r.rate.lastVisitor >= r.watchVisitor ||
		e.Network != 0 && (r.rate.lastNetwork >= r.watchNetwork || r.rotation.lastGate >= r.rotation.minEvents ||
			r.rate.lastBlock >= r.watchBlock)
}

// Settle re-judges a held valid verdict once SettleWindow has passed: if
// its visitor or network was flagged from a rate window before the view on,
// the view was part of the flood or farm after all.
func (r *Rules) Settle(v *viewcount.Verdict) {
	if v.Reason != viewcount.Valid {
		return
	}
	reason := r.flagged(v)
	if reason == viewcount.Valid {
		return
	}
	if len(r.allowed) > 0 && r.allowed.match(&v.Event, r.ua.info(v.UA).dims.browser, reason, v.Time.UnixMilli()) != "" {
		return // an operator's allow correction restores it, as Judge would
	}
	v.Reason = reason
}

// flagged is why a held view's visitor or network proved a flood or a farm
// from a rate window before the view on; Valid when neither did.
func (r *Rules) flagged(v *viewcount.Verdict) viewcount.Reason {
	since := v.Time.UnixMilli() - r.cfg.RateWindow.Milliseconds()
	if at, ok := r.flags.visitors[v.Visitor]; ok && at >= since {
		return viewcount.Rate
	}
	if nf, ok := r.flags.networks[v.Network]; ok && v.Network != 0 && nf.at >= since {
		return nf.reason
	}
	if bk := r.blockKey(&v.Event); bk != 0 {
		if nf, ok := r.flags.networks[bk]; ok && nf.at >= since {
			return nf.reason
		}
	}
	return viewcount.Valid
}

// SettleWindow is how long watched views are held; 0 when settling is off.
func (r *Rules) SettleWindow() time.Duration {
	return max(r.cfg.SettleWindow, 0)
}
