package judge

// Sketch sizes. Visitors and networks have sketches of their own, so the
// heavy keys (busy networks, thousands of views) never share counters with
// the light ones (visitors, a few views each) they could push over a limit.
//
// visitorLogWidth: 4 rows of 2^20 16-bit counters, 8 MiB per bucket. At 1M
// views per RateWindow in one partition (~17k views/s, far beyond one
// validator's usual share) that is on average one view per counter before
// conservative update; TestCountMinOverestimate measures what that does to
// a realistic mix: almost every visitor is counted exactly and the worst is
// a few views over, nowhere near the 15 a visitor at half the limit would
// need. networkLogWidth: 2^19, 4 MiB per bucket; networks are far fewer
// than visitors, and their limit far higher. Both sketches keep the current
// and the previous bucket: 24 MiB per Rules (32 with IPv6 views), whatever the traffic. Beyond
// the sizing load the estimates degrade gracefully (more false Rate
// verdicts); the memory never grows.
//
// blockLogWidth: 2^19, 4 MiB per bucket, 8 MiB per Rules, allocated by the
// first IPv6 view (an IPv4-only deployment never pays it): its keys are
// (IPv6 /32, site, page), far fewer busy ones than visitors.
const (
	visitorLogWidth = 20
	networkLogWidth = 19
	blockLogWidth   = 19
)

// Key tags give each kind of key its own hash function.
const (
	tagVisitor = 0x76697369746f7221 // "visitor!"
	tagNetwork = 0x6e6574776f726b21 // "network!"
	tagBlock   = 0x626c6f636b6b6b21 // "blockkk!"
)

// rateLimiter counts views per visitor and per network over a sliding window
// of RateWindow: a bucket of RateWindow aligned to absolute time, plus the
// previous bucket weighted by how much of it still lies inside the window
// (the "sliding window counter" approximation Cloudflare and nginx-style
// limiters use). It assumes the previous bucket's views were spread evenly;
// the estimate always lies between the count of the current bucket and the
// count of the last two.
type rateLimiter struct {
	visitors, networks, blocks             bucketCounts
	visitorLimit, networkLimit, blockLimit uint64
	// The estimates of the last view counted, for Rules.Watched and flags.
	lastVisitor, lastNetwork, lastBlock uint64
}

func newRateLimiter(cfg Config) rateLimiter {
	span := cfg.RateWindow.Milliseconds()
	return rateLimiter{
		visitors:     newBucketCounts(span, visitorLogWidth),
		networks:     newBucketCounts(span, networkLogWidth),
		blocks:       newBucketCounts(span, blockLogWidth),
		visitorLimit: uint64(cfg.VisitorRateLimit),
		networkLimit: uint64(cfg.NetworkRateLimit),
		blockLimit:   uint64(cfg.BlockRateLimit),
	}
}

// over counts a view of visitor from network (and block, its IPv6 /32 and
// page: Rules.blockKey) at now (the rules' latest event time) and reports
// whether any now exceeds its limit. All are counted whatever the answer,
// so the counts are a function of the events alone, not of earlier
// verdicts. network 0 is "unknown" (ingest had no address) and is not
// limited: those views would otherwise all share one key. block 0 is none
// (IPv4).
func (r *rateLimiter) over(visitor, network, block uint64, now int64) bool {
	v := estimate(&r.visitors, mix(visitor, tagVisitor), now)
	r.lastVisitor, r.lastNetwork, r.lastBlock = v, 0, 0
	if network == 0 {
		return v > r.visitorLimit
	}
	n := estimate(&r.networks, mix(network, tagNetwork), now)
	r.lastNetwork = n
	if block != 0 {
		r.lastBlock = estimate(&r.blocks, mix(block, tagBlock), now)
	}
	return v > r.visitorLimit || n > r.networkLimit || r.lastBlock > r.blockLimit
}

// estimate counts key h at now and returns its sliding-window count.
func estimate(b *bucketCounts, h uint64, now int64) uint64 {
	cur, prev := b.add(h, now)
	span := uint64(b.span)
	return uint64(cur) + uint64(prev)*(span-uint64(b.elapsed(now)))/span
}

func (r *rateLimiter) reset() {
	r.visitors.reset()
	r.networks.reset()
	r.blocks.reset()
}

func (r *rateLimiter) bytes() int { return r.visitors.bytes() + r.networks.bytes() + r.blocks.bytes() }
