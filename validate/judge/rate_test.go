package judge

import (
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// judgeAt returns an f-test helper judging a view by visitor of network at
// t0+at, each on its own page (so Duplicate stays out of the way).
func judgeAt(t *testing.T, r *Rules) func(at time.Duration, visitor, network uint64, ua string, want viewcount.Reason) {
	page := 0
	return func(at time.Duration, visitor, network uint64, ua string, want viewcount.Reason) {
		t.Helper()
		page++
		e := viewcount.Event{Time: t0.Add(at), Site: "example.com", Page: "/" + strconv.Itoa(page), UA: ua,
			Visitor: visitor, Network: network}
		if got := r.Judge(&e); got != want {
			t.Errorf("at +%v visitor %d network %d: %s, want %s", at, visitor, network, got, want)
		}
	}
}

// TestRateVisitor walks the sliding window's exact boundaries. t0 is on a
// minute boundary, so buckets are [t0, t0+1m), [t0+1m, t0+2m), ...; the
// estimate is the current bucket plus the previous one weighted by how much
// of it is still inside the window, rounded down.
func TestRateVisitor(t *testing.T) {
	r := newTestRules(t, Config{VisitorRateLimit: 3, RateWindow: time.Minute})
	f := judgeAt(t, r)
	const s, ms = time.Second, time.Millisecond
	// Visitor 1: the fourth view within the minute is over the limit.
	f(0, 1, 1, uaChromeWin, viewcount.Valid)
	f(1*s, 1, 1, uaChromeWin, viewcount.Valid)
	f(2*s, 1, 1, uaChromeWin, viewcount.Valid)
	f(3*s, 1, 1, uaChromeWin, viewcount.Rate)
	f(4*s, 2, 1, uaChromeWin, viewcount.Valid) // another visitor of the network is not affected
	// Next bucket, first instant: the previous bucket (4 views) weighs fully.
	f(time.Minute, 1, 1, uaChromeWin, viewcount.Rate) // 1 + 4
	// Two buckets on: only the +1m view is recent.
	f(2*time.Minute, 1, 1, uaChromeWin, viewcount.Valid) // 1 + 1×1

	// Visitor 3: 3 views at the end of bucket 10; their weight decays
	// through bucket 11.
	b := 10 * time.Minute
	f(b+57*s, 3, 1, uaChromeWin, viewcount.Valid)
	f(b+58*s, 3, 1, uaChromeWin, viewcount.Valid)
	f(b+59*s, 3, 1, uaChromeWin, viewcount.Valid)
	// +11m 0s: 1 + 3×60/60 = 4 > 3.
	f(b+time.Minute, 3, 1, uaChromeWin, viewcount.Rate)
	// +11m 40s: 2 + ⌊3×20/60⌋ = 3: at the limit, not over it.
	f(b+time.Minute+40*s, 3, 1, uaChromeWin, viewcount.Valid)
	// +11m 40.001s: 3 + ⌊3×19.999/60⌋ = 3: the previous bucket's weight
	// has just dropped below one view.
	f(b+time.Minute+40*s+ms, 3, 1, uaChromeWin, viewcount.Valid)
	// +11m 41s: 4 + 0.
	f(b+time.Minute+41*s, 3, 1, uaChromeWin, viewcount.Rate)
	// +12m 0s: 1 + 4×60/60 (bucket 11 holds 4 views) = 5.
	f(b+2*time.Minute, 3, 1, uaChromeWin, viewcount.Rate)
	// +12m 59.999s: 2 + ⌊4×0.001/60⌋ = 2.
	f(b+3*time.Minute-ms, 3, 1, uaChromeWin, viewcount.Valid)
}

func TestRateNetwork(t *testing.T) {
	r := newTestRules(t, Config{NetworkRateLimit: 5})
	f := judgeAt(t, r)
	for v := range uint64(5) {
		f(time.Duration(v)*time.Second, 100+v, 7, uaFirefoxWin, viewcount.Valid)
	}
	f(5*time.Second, 200, 7, uaFirefoxWin, viewcount.Rate)  // the sixth view of network 7
	f(5*time.Second, 201, 8, uaFirefoxWin, viewcount.Valid) // another network
	// Network 0 is "unknown" (ingest had no address): never limited as one.
	for v := range uint64(10) {
		f(6*time.Second, 300+v, 0, uaFirefoxWin, viewcount.Valid)
	}
	// Rate views keep counting: the flood stays flagged while it lasts.
	for i := range 20 {
		f(10*time.Second+time.Duration(i)*time.Second, 400, 7, uaFirefoxWin, viewcount.Rate)
	}
}

// TestRateState: events rejected by a stateless rule, and retries, do not
// count towards a rate.
func TestRateState(t *testing.T) {
	r := newTestRules(t, Config{VisitorRateLimit: 2})
	ev := func(mod func(*viewcount.Event)) *viewcount.Event {
		e := &viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: uaChromeWin, Visitor: 1, Network: 1, ID: "x"}
		mod(e)
		return e
	}
	f := func(e *viewcount.Event, want viewcount.Reason) {
		t.Helper()
		if got := r.Judge(e); got != want {
			t.Errorf("Judge(%+v) = %s, want %s", *e, got, want)
		}
	}
	f(ev(func(e *viewcount.Event) { e.Site = "nope.net" }), viewcount.UnknownSite)
	f(ev(func(e *viewcount.Event) { e.Datacenter = true }), viewcount.Datacenter)
	f(ev(func(e *viewcount.Event) {}), viewcount.Valid)
	f(ev(func(e *viewcount.Event) {}), viewcount.DuplicateID)
	f(ev(func(e *viewcount.Event) {}), viewcount.DuplicateID)
	f(ev(func(e *viewcount.Event) { e.ID, e.Page = "y", "/y" }), viewcount.Valid)
	f(ev(func(e *viewcount.Event) { e.ID, e.Page = "z", "/z" }), viewcount.Rate)
}
