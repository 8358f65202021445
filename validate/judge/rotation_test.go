package judge

import (
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// uaN is the n-th of a list of real-looking browser user agents, as a farm
// would rotate through them.
func uaN(n int) string {
	return "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" + strconv.Itoa(100+n) + ".0.0.0 Safari/537.36"
}

// TestRotationWindow walks the generation boundaries. RotationWindow 10m
// gives 5-minute buckets aligned to absolute time (t0 is on one); a view is
// judged by the generation that began with the previous bucket.
func TestRotationWindow(t *testing.T) {
	r := newTestRules(t, Config{RotationWindow: 10 * time.Minute, RotationMaxUAs: 3, RotationMinEvents: 1})
	f := judgeAt(t, r)
	const m, ms = time.Minute, time.Millisecond
	visitor := uint64(0)
	g := func(at time.Duration, network uint64, ua string, want viewcount.Reason) {
		t.Helper()
		visitor++ // each UA its own visitor, as for a farm
		f(at, visitor, network, ua, want)
	}
	// Network 1: three UAs are fine, the fourth is over the limit, and the
	// network stays flagged (whatever UA) while a generation that saw it
	// pass is live: until the end of the next bucket.
	g(0, 1, uaN(1), viewcount.Valid)
	g(1*m, 1, uaN(2), viewcount.Valid)
	g(2*m, 1, uaN(3), viewcount.Valid)
	g(2*m, 1, uaN(3), viewcount.Valid) // a repeated UA adds nothing
	g(3*m, 1, uaN(4), viewcount.NetworkRotation)
	g(3*m, 1, uaN(1), viewcount.NetworkRotation)
	g(3*m, 2, uaN(5), viewcount.Valid) // another network
	g(7*m, 1, uaN(1), viewcount.NetworkRotation)
	g(10*m-ms, 1, uaN(1), viewcount.NetworkRotation)
	g(10*m, 1, uaN(1), viewcount.Valid) // the latched generations are gone

	// Network 3: two UAs late in bucket 4 and two early in bucket 5 are
	// four within the trailing window: caught across the boundary.
	b := 20 * m
	g(b+4*m, 3, uaN(1), viewcount.Valid)
	g(b+4*m, 3, uaN(2), viewcount.Valid)
	g(b+5*m, 3, uaN(3), viewcount.Valid)
	g(b+6*m, 3, uaN(4), viewcount.NetworkRotation)

	// Network 4: two UAs in bucket 8 and two in bucket 10 are more than a
	// window apart: not caught.
	b = 40 * m
	g(b+1*m, 4, uaN(1), viewcount.Valid)
	g(b+2*m, 4, uaN(2), viewcount.Valid)
	g(b+11*m, 4, uaN(3), viewcount.Valid)
	g(b+12*m, 4, uaN(4), viewcount.Valid)
}

// TestRotationGate: a network gets a sketch only once it has
// RotationMinEvents views in the generation; earlier UAs are not counted.
func TestRotationGate(t *testing.T) {
	r := newTestRules(t, Config{RotationMaxUAs: 2, RotationMinEvents: 3})
	f := judgeAt(t, r)
	f(0, 1, 9, uaN(1), viewcount.Valid) // not yet tracked
	f(0, 2, 9, uaN(2), viewcount.Valid) // not yet tracked
	if n := r.Stats().RotationNetworks; n != 0 {
		t.Errorf("a network below the gate holds %d sketches", n)
	}
	f(0, 3, 9, uaN(3), viewcount.Valid) // tracked from here: {3}
	f(0, 4, 9, uaN(4), viewcount.Valid) // {3, 4}
	f(0, 5, 9, uaN(5), viewcount.NetworkRotation)
	if n := r.Stats().RotationNetworks; n != 2 {
		t.Errorf("tracked networks = %d, want 2 (one per live generation)", n)
	}
	for _, g := range r.rotation.gens {
		if sk, ok := g.nets[9]; !ok || sk != nil {
			t.Errorf("the network's sketch was not latched and freed: %v %v", sk, ok)
		}
	}
}

// TestRotationCap: a full generation tracks no new network (first come,
// first served), and says so in Stats; the next generation starts empty.
func TestRotationCap(t *testing.T) {
	r := newTestRules(t, Config{RotationMaxUAs: 2, RotationMinEvents: 1, RotationMaxNetworks: 1})
	f := judgeAt(t, r)
	f(0, 1, 1, uaN(1), viewcount.Valid) // network 1 takes the only place
	for i := range 5 {
		f(0, uint64(10+i), 2, uaN(10+i), viewcount.Valid) // network 2 is not tracked
	}
	if s := r.Stats(); s.RotationNetworks != 2 || s.RotationUntracked != 10 {
		t.Errorf("stats %+v, want 2 tracked, 10 untracked", s)
	}
	// Two buckets later both generations are new: network 2 comes first.
	for i := range 3 {
		f(10*time.Minute, uint64(20+i), 2, uaN(20+i), []viewcount.Reason{viewcount.Valid, viewcount.Valid, viewcount.NetworkRotation}[i])
	}
}

// TestRotationState: bots and other stateless rejections are not in the
// sketches (a crawler fleet on one network is BotUA, not rotation, and does
// not make its network's people look like a farm); network 0 is never
// judged.
func TestRotationState(t *testing.T) {
	r := newTestRules(t, Config{RotationMaxUAs: 2, RotationMinEvents: 1})
	f := judgeAt(t, r)
	f(0, 1, 5, "curl/8."+strconv.Itoa(1), viewcount.BotUA)
	f(0, 2, 5, "python-requests/2.3", viewcount.BotUA)
	f(0, 3, 5, "Go-http-client/1.1", viewcount.BotUA)
	f(0, 4, 5, uaN(1), viewcount.Valid)
	f(0, 5, 5, uaN(2), viewcount.Valid)
	for i := range 10 {
		f(0, uint64(10+i), 0, uaN(i), viewcount.Valid)
	}
}
