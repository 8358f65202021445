package judge

import (
	"github.com/axiomhq/hyperloglog"
)

// gateLogWidth sizes the rotation gate's sketch: 4 rows of 2^19 counters,
// 4 MiB per bucket, 8 MiB per Rules. The gate only decides when a network
// is busy enough to deserve a cardinality sketch, so an overestimate costs a
// sketch too early (memory, within the cap), never a wrong verdict.
const gateLogWidth = 19

const tagGate = 0x67617465676174 // "gategat"

// hllPrecision: 2^12 registers. Sketches are latched and freed as soon as
// they pass the limit, so at the default limit they never leave the sparse
// representation (a few hundred bytes); precision only bounds the worst
// case, a dense sketch of 4 KiB, if RotationMaxUAs is set in the thousands.
const hllPrecision = 12

// rotation judges whether a network rotates through many user agents: the
// signature of a view farm behind one /24 or /48 replaying a list of
// browser user agents so its views look like many people.
//
// Time is cut into buckets of half the RotationWindow, aligned to absolute
// time. Each generation of sketches covers two consecutive buckets and a new
// generation starts every bucket, so two are live: every network's views go
// into both, and a view is judged by the older one, which holds the
// network's user agents from the start of the previous bucket until now: a
// trailing window of between half and the whole RotationWindow. (A single
// tumbling window would let a farm split its rotation across a boundary;
// merging per-bucket sketches on every view would cost too much.)
//
// Memory stays bounded whatever the number of networks:
//
//   - A network gets a sketch in a generation only once the gate (a
//     count-min sketch of views per network per bucket) shows at least
//     RotationMinEvents views in that generation's span. Most networks (one
//     household, a few views) never get one and cost nothing. The user
//     agents of the views before the gate opened are not in the sketch, so
//     the limit applies to the rest: detection comes at most
//     RotationMinEvents-1 views late.
//   - Each generation holds at most RotationMaxNetworks sketches. When it is
//     full, networks that become busy later in its span are not tracked in
//     it (the deterministic choice: first come, first served; nothing is
//     evicted, so flooding new networks cannot push out the state of a farm
//     already tracked, only delay tracking newcomers until the next
//     generation, half a window later). Untracked counts how often.
//   - A sketch that passes the limit is latched (the network stays flagged
//     for the rest of the generation) and freed, so no sketch grows much
//     beyond RotationMaxUAs entries.
type rotation struct {
	gate      bucketCounts
	maxUAs    uint64
	minEvents uint64
	maxNets   int
	gens      [2]generationSketches // [0] older, [1] newer; both cover now
	untracked uint64
	lastGate  uint64 // views of the last view's network in the window, for Rules.Watched
}

// generationSketches maps network → its user-agent sketch; nil means the
// network passed the limit in this generation (latched).
type generationSketches struct {
	bucket int64 // the bucket the generation started in
	nets   map[uint64]*hyperloglog.Sketch
}

func newRotation(cfg Config) rotation {
	span := max(1, cfg.RotationWindow.Milliseconds()/2)
	return rotation{
		gate:      newBucketCounts(span, gateLogWidth),
		maxUAs:    uint64(cfg.RotationMaxUAs),
		minEvents: uint64(cfg.RotationMinEvents),
		maxNets:   cfg.RotationMaxNetworks,
	}
}

// rotating records a view with user-agent hash ua from network at now and
// reports whether the network is rotating user agents. network 0 (unknown)
// is never judged.
func (r *rotation) rotating(network, ua uint64, now int64) bool {
	r.lastGate = 0
	if network == 0 {
		return false
	}
	cur, prev := r.gate.add(mix(network, tagGate), now)
	r.lastGate = uint64(cur) + uint64(prev)
	r.advance(r.gate.bucket)
	// The older generation spans the previous bucket and this one, the
	// newer only this one.
	over := r.record(&r.gens[0], network, ua, uint64(cur)+uint64(prev))
	return r.record(&r.gens[1], network, ua, uint64(cur)) || over
}

func (r *rotation) advance(k int64) {
	switch {
	case r.gens[1].nets != nil && k == r.gens[1].bucket:
		return
	case r.gens[1].nets != nil && k == r.gens[1].bucket+1:
		r.gens[0] = r.gens[1]
	default:
		// A gap: the previous bucket saw nothing, so the older generation
		// starts empty, as a replay starting here would have it.
		r.gens[0] = generationSketches{bucket: k - 1, nets: map[uint64]*hyperloglog.Sketch{}}
	}
	r.gens[1] = generationSketches{bucket: k, nets: map[uint64]*hyperloglog.Sketch{}}
}

func (r *rotation) record(g *generationSketches, network, ua, views uint64) bool {
	sk, ok := g.nets[network]
	switch {
	case ok && sk == nil:
		return true // latched
	case !ok && views < r.minEvents:
		return false
	case !ok && len(g.nets) >= r.maxNets:
		r.untracked++
		return false
	case !ok:
		sk, _ = hyperloglog.NewSketch(hllPrecision, true)
		g.nets[network] = sk
	}
	sk.InsertHash(ua)
	if sk.Estimate() > r.maxUAs {
		g.nets[network] = nil
		return true
	}
	return false
}

func (r *rotation) reset() {
	r.gate.reset()
	r.gens = [2]generationSketches{}
	r.untracked = 0
}

// tracked returns how many networks hold a sketch (or a latch) now.
func (r *rotation) tracked() int { return len(r.gens[0].nets) + len(r.gens[1].nets) }
