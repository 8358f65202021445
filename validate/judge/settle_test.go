package judge

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

const settleUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"

func settleEvent(t0 time.Time, ms int, visitor, network uint64, page string) viewcount.Event {
	return viewcount.Event{Time: t0.Add(time.Duration(ms) * time.Millisecond), Site: "example.com", Page: page,
		UA: settleUA, Visitor: visitor, Network: network, Source: viewcount.SourcePixel}
}

// TestSettleFlood: a flood's views are watched from the visitor's fifth
// view on; once the visitor crosses the limit, the held views settle as
// rate. A person's few views are never watched.
func TestSettleFlood(t *testing.T) {
	r, err := NewRules(Config{}, sitesOf{"example.com": true})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var held []viewcount.Verdict
	counted := 0
	for i := 0; i < 100; i++ { // 100 pages in 20 s
		e := settleEvent(t0, i*200, 42, 7, fmt.Sprintf("/p%d", i))
		v := viewcount.Verdict{Event: e, Reason: r.Judge(&e)}
		switch {
		case v.Reason == viewcount.Valid && r.Watched(&e):
			held = append(held, v)
		case v.Reason == viewcount.Valid:
			counted++
		}
	}
	if counted != 4 {
		t.Errorf("%d flood views counted at once, want 4 (before the visitor is watched)", counted)
	}
	for i := range held {
		r.Settle(&held[i])
		if held[i].Reason != viewcount.Rate {
			t.Errorf("held view %d settled as %s, want rate", i, held[i].Reason)
		}
	}

	// A person: three pages a minute apart, never watched, always counted.
	for i := 0; i < 3; i++ {
		e := settleEvent(t0, 60_000*i, 99, 8, fmt.Sprintf("/q%d", i))
		if got := r.Judge(&e); got != viewcount.Valid || r.Watched(&e) {
			t.Errorf("person's view %d: %s watched=%v", i, got, r.Watched(&e))
		}
	}
}

func TestSettleOff(t *testing.T) {
	r, err := NewRules(Config{SettleWindow: -1}, sitesOf{"example.com": true})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 20; i++ {
		e := settleEvent(t0, i*200, 42, 7, fmt.Sprintf("/p%d", i))
		if r.Judge(&e); r.Watched(&e) {
			t.Fatal("a view is watched with settling off")
		}
	}
	if r.SettleWindow() != 0 {
		t.Fatalf("SettleWindow = %v, want 0", r.SettleWindow())
	}
}

// TestFlagsFull: a flag map full of live flags refuses new ones without
// walking itself again for each (a flood of distinct visitors made that
// quadratic), still refreshes the flags it holds, and once the oldest have
// expired, sweeps them and takes new ones.
func TestFlagsFull(t *testing.T) {
	f := newFlags(time.Minute) // horizon 60,000 ms
	for i := range uint64(flagCap) {
		f.visitor(i, int64(i%1000)) // raised at 0..999 ms
	}
	f.visitor(1<<40, 5_000)
	if len(f.visitors) != flagCap {
		t.Fatalf("%d flags, cap %d", len(f.visitors), flagCap)
	}
	if _, ok := f.visitors[1<<40]; ok {
		t.Fatal("a full map of live flags took a new one")
	}
	next := f.nextVisitorSweep
	if next < 60_000 {
		t.Fatalf("next sweep at %d, before the oldest flag can expire (60,000)", next)
	}
	for i := range uint64(1000) { // refused without a sweep: the schedule stays
		f.visitor(1<<40+i, 6_000)
	}
	if f.nextVisitorSweep != next || len(f.visitors) != flagCap {
		t.Fatalf("refusals changed the map: %d flags, next sweep %d (was %d)", len(f.visitors), f.nextVisitorSweep, next)
	}
	f.visitor(7, 7_000) // refresh in place
	if f.visitors[7] != 7_000 {
		t.Fatal("a held flag was not refreshed")
	}
	// Flags raised at 0..499 ms are older than the horizon at 60,500 ms.
	f.visitor(1<<41, 60_500)
	if _, ok := f.visitors[1<<41]; !ok {
		t.Fatal("no room made after flags expired")
	}
	if n := len(f.visitors); n > flagCap || n < flagCap/4 {
		t.Fatalf("%d flags after the sweep", n)
	}
	f.reset()
	if len(f.visitors) != 0 || f.nextVisitorSweep != math.MinInt64 {
		t.Fatal("reset kept state")
	}
}

// BenchmarkFlagsFlood raises flags for distinct visitors against a full map
// of live flags: the flood case that used to walk the map every time.
func BenchmarkFlagsFlood(b *testing.B) {
	f := newFlags(13 * time.Minute)
	for i := range uint64(flagCap) {
		f.visitor(i, 0)
	}
	v := uint64(flagCap)
	for b.Loop() {
		v++
		f.visitor(v, 1000)
	}
}
