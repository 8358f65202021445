package ratelimit

import (
	"net/netip"
	"runtime"
	"testing"
	"time"
)

// clock is a test clock that moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func addr4(i uint32) netip.Addr {
	return netip.AddrFrom4([4]byte{byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)})
}
func allowN(t *Table, a netip.Addr, n int) (allowed int) {
	for range n {
		if t.Allow(a) {
			allowed++
		}
	}
	return allowed
}

func TestBurstThenRate(t *testing.T) {
	c := &clock{t: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
	tb := New(10, 5, 1024, c.now)
	flood, other := netip.MustParseAddr("198.51.100.7"), netip.MustParseAddr("203.0.113.9")
	if got := allowN(tb, flood, 100); got != 5 {
		t.Fatalf("a flood got %d requests through at once, want the burst of 5", got)
	}
	if got := allowN(tb, other, 5); got != 5 {
		t.Fatalf("another address got %d of 5 through while the first was limited", got)
	}
	// The rate refills one request per 100 ms.
	c.advance(100 * time.Millisecond)
	if got := allowN(tb, flood, 10); got != 1 {
		t.Fatalf("after 100ms at 10/s: %d allowed, want 1", got)
	}
	c.advance(time.Minute)
	if got := allowN(tb, flood, 100); got != 5 {
		t.Fatalf("after a quiet minute: %d allowed, want the full burst of 5", got)
	}
	// IPv4-mapped IPv6 is the same client as the IPv4 address.
	if tb.Allow(netip.AddrFrom16(flood.As16())) {
		t.Fatal("the IPv4-mapped form of a limited address was let through")
	}
}

func TestIPv6Per64(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	tb := New(1, 3, 1024, c.now)
	// One subscriber's /64 is one client, whichever addresses it picks.
	got := allowN(tb, netip.MustParseAddr("2001:db8:1:2::1"), 2) +
		allowN(tb, netip.MustParseAddr("2001:db8:1:2:ffff::9"), 2)
	if got != 3 {
		t.Fatalf("one /64 got %d through, want its burst of 3", got)
	}
	if allowN(tb, netip.MustParseAddr("2001:db8:1:3::1"), 3) != 3 {
		t.Fatal("the next /64 was limited with the first")
	}
}

// TestMillionAddresses: a million distinct addresses in one second leave
// the table's memory as it was and limit none of them.
func TestMillionAddresses(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	tb := New(DefaultRate, 2*DefaultRate, DefaultSlots, c.now)
	if tb.Bytes() != DefaultSlots*8 {
		t.Fatalf("table is %d bytes", tb.Bytes())
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	denied := 0
	for i := range uint32(1_000_000) {
		if i%1000 == 0 {
			c.advance(time.Millisecond)
		}
		if !tb.Allow(addr4(0x0a000000 + i)) {
			denied++
		}
	}
	runtime.ReadMemStats(&after)
	if denied != 0 {
		t.Errorf("%d of a million addresses making one request each were limited", denied)
	}
	if after.TotalAlloc-before.TotalAlloc > 64<<10 {
		t.Errorf("a million addresses allocated %d bytes", after.TotalAlloc-before.TotalAlloc)
	}
	if n := testing.AllocsPerRun(1000, func() { tb.Allow(addr4(0xc0000200)) }); n != 0 {
		t.Errorf("Allow allocates %v times", n)
	}
	if tb.Bytes() != DefaultSlots*8 {
		t.Fatalf("table grew to %d bytes", tb.Bytes())
	}
}

func BenchmarkAllow(b *testing.B) {
	tb := New(DefaultRate, 2*DefaultRate, DefaultSlots, time.Now)
	var i uint32
	for b.Loop() {
		tb.Allow(addr4(i))
		i++
	}
}
