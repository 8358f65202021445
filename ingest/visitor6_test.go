package ingest

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// TestIPv4IDsUnchanged pins the IPv4 visitor and network ids to what they
// were before IPv6 visitors were hashed by /64: IPv4 behaviour must not
// move (a changed id would count every IPv4 visitor of the day of an
// upgrade twice).
func TestIPv4IDsUnchanged(t *testing.T) {
	for _, tc := range []struct {
		ip               string
		visitor, network uint64
	}{
		{"203.0.113.7", 0xb9e5103a615afab1, 0xd146a1db615afab1},
		{"198.51.100.200", 0x31d1761cde26faa9, 0x8ac5c265de26faa9},
		{"::ffff:192.0.2.1", 0xbf4f246abb3906b6, 0x9621596bb3906b6},
	} {
		v, n := VisitorID(testSalt, "example.com", tc.ip, chromeUA), NetworkID(testSalt, netip.MustParseAddr(tc.ip))
		if v != tc.visitor || n != tc.network {
			t.Errorf("%s: visitor %#x network %#x, want %#x %#x", tc.ip, v, n, tc.visitor, tc.network)
		}
	}
	// The IPv6 /48's network id is unchanged too: corrections name it.
	if n := NetworkID(testSalt, netip.MustParseAddr("2001:db8:1:2:3:4:5:6")); n != 0xe1b559aafa199a0d {
		t.Errorf("IPv6 network id %#x moved", n)
	}
}

// TestIPv6VisitorIsSlash64: found by an attacker's probe, one /64 (what any
// IPv6 home line or phone gets) added 550 counted views in 0.2 s, every
// request from another address of it: the visitor id hashed the whole
// address, and privacy extensions (RFC 8981) rotate the host half by
// design, so each address was a new visitor. The visitor id now hashes
// the /64. And a /32's /48s each started a fresh network (200 /48s, 200
// counted views): every /48 of a /32 now shares the partition key, so one
// validator sees the /32 whole, and its rate rule a key for it
// (viewcount.Event.Block).
func TestIPv6VisitorIsSlash64(t *testing.T) {
	ip := netip.MustParseAddr
	visitor := func(a string) uint64 { return VisitorID(testSalt, "example.com", a, chromeUA) }
	const home = "2001:db8:aa:bb:"
	for _, host := range []string{"1:2:3:4", "dead:beef:0:1", "ffff:ffff:ffff:ffff", ":1"} {
		if visitor(home+host) != visitor(home+"5:6:7:8") {
			t.Errorf("%s%s: another visitor than the rest of its /64", home, host)
		}
	}
	if visitor("2001:db8:aa:bb::1") == visitor("2001:db8:aa:bc::1") {
		t.Error("two /64s: one visitor")
	}
	e := func(a string) viewcount.Event {
		return viewcount.Event{Visitor: visitor(a), Network: NetworkID(testSalt, ip(a))}
	}
	a, b, c := e("2001:db8:aa:bb::1"), e("2001:db8:ab:1::1"), e("2001:db9:aa:bb::1")
	if a.Network == b.Network {
		t.Error("two /48s: one network")
	}
	if viewcount.Partition(a.Visitor, 1<<16) != viewcount.Partition(b.Visitor, 1<<16) {
		t.Error("two /48s of one /32 on different partitions")
	}
	ba, oka := a.Block()
	bb, okb := b.Block()
	bc, okc := c.Block()
	if !oka || !okb || !okc || ba != bb || ba == bc {
		t.Errorf("blocks: %#x %v, %#x %v (same /32), %#x %v (another)", ba, oka, bb, okb, bc, okc)
	}
	if v4 := e("203.0.113.7"); func() bool { _, ok := v4.Block(); return ok }() {
		t.Error("an IPv4 view has a block")
	}
}

// FuzzIPv6IDs: for any two IPv6 addresses (and any salt), the visitor ids
// agree exactly when the /64s do, the network ids when the /48s do, and
// the partition keys (Block) when the /32s do. Hash collisions would break
// the "only if" halves with a chance of 2^-64 (2^-32 for the block key).
func FuzzIPv6IDs(f *testing.F) {
	seed := func(a, b string, salt uint8) {
		x, y := netip.MustParseAddr(a).As16(), netip.MustParseAddr(b).As16()
		f.Add(x[:], y[:], salt)
	}
	seed("2001:db8:aa:bb:1:2:3:4", "2001:db8:aa:bb:9::", 7) // one /64
	seed("2001:db8:aa:bb::1", "2001:db8:aa:bc::1", 1)       // one /48
	seed("2001:db8:1::", "2001:db8:2::", 9)                 // one /32
	seed("2001:db8::1", "2001:db9::1", 3)                   // two /32s
	seed("::", "::102:304:506:708", 0)
	f.Fuzz(func(t *testing.T, x, y []byte, s uint8) {
		if len(x) != 16 || len(y) != 16 {
			return
		}
		a, b := netip.AddrFrom16([16]byte(x)), netip.AddrFrom16([16]byte(y))
		if a.Is4In6() || b.Is4In6() {
			return // IPv4, judged as such
		}
		salt := make([]byte, SaltLen)
		for i := range salt {
			salt[i] = s + byte(i)
		}
		ev := func(ip netip.Addr) viewcount.Event {
			return viewcount.Event{Visitor: VisitorID(salt, "example.com", ip.String(), chromeUA), Network: NetworkID(salt, ip)}
		}
		ea, eb := ev(a), ev(b)
		same := func(bits int) bool { return netip.PrefixFrom(a, bits).Masked() == netip.PrefixFrom(b, bits).Masked() }
		if (ea.Visitor == eb.Visitor) != same(64) {
			t.Errorf("%s %s: same visitor %v, same /64 %v", a, b, ea.Visitor == eb.Visitor, same(64))
		}
		if (ea.Network == eb.Network) != same(48) {
			t.Errorf("%s %s: same network %v, same /48 %v", a, b, ea.Network == eb.Network, same(48))
		}
		ba, oka := ea.Block()
		bb, okb := eb.Block()
		if !oka || !okb || (ba == bb) != same(32) {
			t.Errorf("%s %s: blocks %#x %v %#x %v, same /32 %v", a, b, ba, oka, bb, okb, same(32))
		}
	})
}

// TestPixelIPv6IDs: the ids ingest publishes for IPv6 clients are
// VisitorID's and NetworkID's: requests from two addresses of one /64 are
// one visitor; from another /48 of the /32, another visitor and network
// on the same partition.
func TestPixelIPv6IDs(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), time.Now, nil)
	addrs := []string{"2001:db8:aa:bb::1", "2001:db8:aa:bb:7:6:5:4", "2001:db8:ab::9"}
	for _, a := range addrs {
		req := httptest.NewRequest(http.MethodGet, "/p.gif?site=example.com&page=/", nil)
		req.RemoteAddr = "[" + a + "]:5000"
		checkGIF(t, srv.do(req), http.StatusOK)
	}
	evs := pub.events()
	for i, a := range addrs {
		if evs[i].Visitor != VisitorID(testSalt, "example.com", a, chromeUA) || evs[i].Network != NetworkID(testSalt, netip.MustParseAddr(a)) {
			t.Fatalf("%s: ids not VisitorID's and NetworkID's", a)
		}
	}
	if evs[0].Visitor != evs[1].Visitor || evs[0].Network != evs[1].Network {
		t.Error("one /64: two visitors")
	}
	if evs[2].Visitor == evs[0].Visitor || evs[2].Network == evs[0].Network || uint32(evs[2].Visitor) != uint32(evs[0].Visitor) {
		t.Error("another /48 of the /32: not another visitor and network on the same partition")
	}
}
