package judge

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// v6 is an IPv6 view as ingest publishes it: network the /48's id, the
// visitor id's low 32 bits the /32's block id (viewcount.Event.Block).
func v6(at time.Time, block, net48, visitor uint64, page, ua string) viewcount.Event {
	network := netID(block<<20 | net48)
	return viewcount.Event{Time: at, Site: "example.com", Page: page, UA: ua, Source: viewcount.SourcePixel,
		Network: network, Visitor: viewcount.NetworkKey(visitor*0x9E3779B97F4A7C15+1, netID(1<<40|block)^0x5555),
		Headers: realHeaders(ua)}
}

// judgeSettled judges evs in order as the consumer does, holding the valid
// views of watched keys and settling them at the end (after every flag
// they could meet), and counts the verdicts.
func judgeSettled(t *testing.T, r *Rules, evs []viewcount.Event) map[viewcount.Reason]int {
	t.Helper()
	out := map[viewcount.Reason]int{}
	var held []viewcount.Verdict
	for i := range evs {
		reason := r.Judge(&evs[i])
		if reason == viewcount.Valid && r.Watched(&evs[i]) {
			held = append(held, viewcount.Verdict{Event: evs[i], Reason: reason})
			continue
		}
		out[reason]++
	}
	for i := range held {
		r.Settle(&held[i])
		out[held[i].Reason]++
	}
	return out
}

// TestIPv6BlockFlood: found by an attacker's probe, 200 /48s of one /32
// added 200 counted views, one each: every network limit is per /48, and a
// /32 holds 65,536 of them. Now a /32's views of one page count against
// BlockRateLimit: a flood from 3,000 /48s of one /32 on one page within a
// minute counts only what came before it was watched (a sixth of the
// limit); without the block key all 3,000 counted. A second /32 is not
// touched by the first's flag.
func TestIPv6BlockFlood(t *testing.T) {
	r := newTestRules(t, Config{})
	ua := browserUAs(1)[0]
	var evs []viewcount.Event
	for i := range 3000 {
		evs = append(evs, v6(t0.Add(time.Duration(i)*20*time.Millisecond), 1, uint64(i), uint64(i), "/inflate", ua))
	}
	got := judgeSettled(t, r, evs)
	limit := DefaultConfig().BlockRateLimit
	if got[viewcount.Valid] > limit/6 || got[viewcount.Rate] < 3000-limit/6 {
		t.Fatalf("3,000 views of one page from 3,000 /48s of one /32: %v, want at most %d valid, the rest rate", got, limit/6)
	}
	// Another /32's views of the same page, after the flood: counted.
	other := []viewcount.Event{v6(t0.Add(61*time.Second), 2, 0, 1, "/inflate", ua)}
	if got := judgeSettled(t, r, other); got[viewcount.Valid] != 1 {
		t.Fatalf("another /32: %v, want valid", got)
	}
}

// TestIPv6BlockRealAudience: what a mobile carrier's /32 looks like to a
// busy site must pass. 2,000 views a minute for ten minutes from one /32
// (phones on a few hundred /48s, each phone its own /64), over 300 pages of
// Zipf popularity plus one viral page taking 800 a minute of them: no view
// is rate or network_rotation. (The busiest site this is sized for: one
// page at 800 a minute from one /32 is a page seen ~5,000 times a minute.)
func TestIPv6BlockRealAudience(t *testing.T) {
	r := newTestRules(t, Config{})
	rnd := rand.New(rand.NewPCG(5, 6))
	zipf := rand.NewZipf(rnd, 1.1, 1, 299)
	uas := browserUAs(30)
	var evs []viewcount.Event
	const perMinute, minutes = 2000, 10
	for i := range perMinute * minutes {
		at := t0.Add(time.Duration(i) * time.Minute / perMinute)
		page := "/p/" + strconv.FormatUint(zipf.Uint64(), 10)
		if i%5 < 2 {
			page = "/viral"
		}
		phone := uint64(rnd.IntN(200000))
		evs = append(evs, v6(at, 7, phone%400, phone, page, uas[phone%uint64(len(uas))]))
	}
	got := judgeSettled(t, r, evs)
	if got[viewcount.Rate] != 0 || got[viewcount.NetworkRotation] != 0 || got[viewcount.Valid] < len(evs)*9/10 {
		t.Fatalf("a carrier's audience from one /32: %v, want no rate or network_rotation", got)
	}
}

// TestBlockRuleLeavesIPv4Alone: IPv4 views have no block (their partition
// key is their network's), so the block limit never decides one: on the
// realistic mixed stream every verdict is the same whatever the limit.
func TestBlockRuleLeavesIPv4Alone(t *testing.T) {
	for seed := range uint64(3) {
		evs := stream(5000, time.Hour, 400, seed)
		low, def := newTestRules(t, Config{BlockRateLimit: 1}), newTestRules(t, Config{})
		for i := range evs {
			if _, ok := evs[i].Block(); ok {
				t.Fatalf("an IPv4 view with a block: %+v", evs[i])
			}
			if a, b := low.Judge(&evs[i]), def.Judge(&evs[i]); a != b {
				t.Fatalf("seed %d event %d: %s with BlockRateLimit 1, %s with the default", seed, i, a, b)
			}
		}
	}
}

// TestBlockLimitBound: property. Over random floods from one /32 (any
// number of /48s and /64s, any spread over time and pages), the views the
// rules count of one page from the /32 within any bucket of RateWindow
// never exceed BlockRateLimit, whatever the shape; and a flood that never
// has more than the limit of one page's views within two minutes (what
// the sliding estimate can see) is not limited at all.
func TestBlockLimitBound(t *testing.T) {
	const limit = 100
	minute := time.Minute.Milliseconds()
	for seed := range uint64(40) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		r := newTestRules(t, Config{BlockRateLimit: limit, VisitorRateLimit: maxRateLimit, NetworkRateLimit: maxRateLimit, SettleWindow: -1})
		n := 50 + rnd.IntN(1500)
		span := time.Duration(1+rnd.IntN(600)) * time.Second
		nets, pages := 1+rnd.IntN(5000), 1+rnd.IntN(4)
		uas := browserUAs(1 + rnd.IntN(3))
		counted := map[string]map[int64]int{} // page → minute bucket → valid views
		times := map[string][]int64{}
		rate := 0
		for i := range n {
			at := t0.Add(time.Duration(float64(span) * float64(i) / float64(n)))
			page := "/p" + strconv.Itoa(rnd.IntN(pages))
			e := v6(at, 3, uint64(rnd.IntN(nets)), uint64(rnd.IntN(1<<30)), page, uas[rnd.IntN(len(uas))])
			times[page] = append(times[page], at.UnixMilli())
			switch r.Judge(&e) {
			case viewcount.Valid:
				if counted[page] == nil {
					counted[page] = map[int64]int{}
				}
				counted[page][floorDiv(at.UnixMilli(), minute)]++
			case viewcount.Rate:
				rate++
			}
		}
		shape := func() string {
			return strconv.Itoa(n) + " views over " + span.String() + " from " + strconv.Itoa(nets) + " /48s on " + strconv.Itoa(pages) + " pages"
		}
		for page, buckets := range counted {
			for b, c := range buckets {
				if c > limit {
					t.Fatalf("seed %d (%s): %d of %s counted in minute %d, limit %d", seed, shape(), c, page, b, limit)
				}
			}
		}
		busiest := 0 // the most views of one page within two minutes
		for _, ts := range times {
			for i, j := 0, 0; i < len(ts); i++ {
				for ts[i]-ts[j] >= 2*minute {
					j++
				}
				busiest = max(busiest, i-j+1)
			}
		}
		if busiest <= limit && rate > 0 {
			t.Fatalf("seed %d (%s): at most %d views of a page within two minutes, yet %d rate", seed, shape(), busiest, rate)
		}
	}
}
