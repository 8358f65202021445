// Package ratelimit bounds the request rate of each client address in a
// table of fixed size: its memory is the same for ten addresses or a
// hundred million, so a flood from many addresses cannot grow it.
//
// Addresses are hashed (under a random seed) and never kept, so nothing here
// can log or leak one.
package ratelimit

import (
	"hash/maphash"
	"net/netip"
	"sync/atomic"
	"time"
)

// DefaultRate is the requests per second one address may make. It is sized
// for a carrier-grade NAT, where thousands of people share one public
// address: 5,000 of them each viewing a page every 10 s is 500 requests a
// second, so twice that is never met by people, only by a script. What gets
// through is still judged by the validators' per-visitor and per-network
// rate rules; this limit only keeps one address from taking the ingest's
// CPU and publish capacity from everyone else.
const DefaultRate = 1000

// DefaultSlots is the table size: 2^17 slots of 8 bytes (1 MiB). At 50,000
// requests a second spread over any number of addresses, each slot sees
// under one request a second, far below DefaultRate, so addresses that
// share slots with each other do not limit one another.
const DefaultSlots = 1 << 17

// Table is a rate limiter per address: the generic cell rate algorithm
// (a token bucket kept as one timestamp) on a count-min sketch. Each address
// maps to two slots; it is allowed while either slot has room (the earlier
// of the two "theoretical arrival times"), and an allowed request pushes
// both forward no further than its own. An address that floods fills both
// of its slots; an innocent address is limited only if both of its slots
// are shared with flooders. Safe for concurrent use, lock-free; the two
// slots are not updated as one, which can let a burst slightly exceed its
// allowance under contention, never hold back a client that is within it.
type Table struct {
	slots    []atomic.Int64 // theoretical arrival time, ns since base
	mask     uint64
	interval int64 // ns between requests at the rate
	burst    int64 // ns of tolerance: burst requests at once
	seed     maphash.Seed
	base     time.Time
	now      func() time.Time
}

// New returns a table allowing rate (> 0) requests a second per address, with
// bursts of up to burst requests (at least 1), in slots slots (rounded up to
// a power of two). now is the clock; time.Now in production (its monotonic
// reading keeps the limiter right across wall-clock steps).
func New(rate float64, burst, slots int, now func() time.Time) *Table {
	n := 1
	for n < slots {
		n <<= 1
	}
	interval := max(int64(float64(time.Second)/rate), 1)
	return &Table{
		slots: make([]atomic.Int64, n), mask: uint64(n - 1),
		interval: interval, burst: int64(max(burst, 1)) * interval,
		seed: maphash.MakeSeed(), base: now(), now: now,
	}
}

// Allow reports whether a request from addr is within its rate, and counts
// it if so. An IPv6 address is limited as its /64, the block a subscriber is
// usually given whole.
func (t *Table) Allow(addr netip.Addr) bool {
	addr = addr.Unmap()
	if addr.Is6() {
		addr = netip.PrefixFrom(addr, 64).Masked().Addr()
	}
	b := addr.As16()
	h := maphash.Bytes(t.seed, b[:])
	s1, s2 := &t.slots[h&t.mask], &t.slots[(h>>32)&t.mask]
	now := int64(t.now().Sub(t.base))
	tat := max(min(s1.Load(), s2.Load()), now) + t.interval
	if tat-now > t.burst {
		return false
	}
	raise(s1, tat)
	raise(s2, tat)
	return true
}

// raise sets s to v unless it is already later.
func raise(s *atomic.Int64, v int64) {
	for {
		old := s.Load()
		if old >= v || s.CompareAndSwap(old, v) {
			return
		}
	}
}

// Bytes is the table's memory, fixed at New.
func (t *Table) Bytes() int { return len(t.slots) * 8 }
