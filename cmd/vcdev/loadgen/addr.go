package loadgen

import "net/netip"

// publicIP is an address in a /24 no other visitor of the generator uses.
func (g *Generator) publicIP() string {
	a := g.network()
	a[3] = byte(1 + g.rng.IntN(254))
	return netip.AddrFrom4(a).String()
}

// network returns the next unused public /24 (last byte zero): the n-th
// value of a bijection of the 2^24 /24s, skipping reserved and datacenter
// ranges, so visitors never share a network however many there are.
func (g *Generator) network() [4]byte {
	for {
		x := (g.net*g.mul + g.add) & 0xffffff
		g.net++
		a := [4]byte{byte(x >> 16), byte(x >> 8), byte(x), 0}
		if g.publicNet(netip.AddrFrom4(a)) {
			return a
		}
	}
}

var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
}

// publicNet reports whether the /24 at a is public, routable and outside
// every datacenter prefix and hosting network.
func (g *Generator) publicNet(a netip.Addr) bool {
	if a.IsPrivate() || a.IsLoopback() || a.IsMulticast() || a.IsLinkLocalUnicast() || a.IsUnspecified() {
		return false
	}
	net := netip.PrefixFrom(a, 24)
	for _, p := range reserved {
		if p.Overlaps(net) {
			return false
		}
	}
	for _, p := range g.mix.DatacenterCIDRs {
		if p.Overlaps(net) {
			return false
		}
	}
	if g.mix.Hosting == nil {
		return true
	}
	// Both ends: an AS's ranges rarely split a /24, but one may.
	last := a.As4()
	last[3] = 255
	return !g.mix.Hosting(a) && !g.mix.Hosting(netip.AddrFrom4(last))
}

// datacenterIP is a random host address in a random datacenter prefix.
func (g *Generator) datacenterIP() string {
	p := g.mix.DatacenterCIDRs[g.rng.IntN(len(g.mix.DatacenterCIDRs))].Masked()
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		if g.rng.IntN(2) == 1 {
			b[i/8] |= 0x80 >> (i % 8)
		}
	}
	a, _ := netip.AddrFromSlice(b)
	if a.Is4() && b[3] == 0 {
		b[3] = 1
		a, _ = netip.AddrFromSlice(b)
	}
	return a.String()
}
