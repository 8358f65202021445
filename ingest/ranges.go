package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strings"
)

// Ranges is a set of IP ranges (the datacenter lists), merged and sorted so
// Contains is a binary search: O(log n) and no allocation per hit however
// many ranges a provider publishes.
type Ranges struct {
	v4 []span // addresses as 16-byte IPv4-mapped values, like v6
	v6 []span
	n  int // prefixes loaded, before merging
}

type span struct{ lo, hi [16]byte }

// LoadRanges reads range files: one CIDR (or single address) per line,
// '#' starts a comment, blank lines are ignored. Errors name file and line.
func LoadRanges(paths ...string) (*Ranges, error) {
	var prefixes []netip.Prefix
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("ingest: ranges: %w", err)
		}
		ps, err := parseRanges(f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
		prefixes = append(prefixes, ps...)
	}
	return NewRanges(prefixes), nil
}

// ParseRanges reads ranges in the file format from r; name labels errors.
func ParseRanges(r io.Reader, name string) (*Ranges, error) {
	ps, err := parseRanges(r, name)
	if err != nil {
		return nil, err
	}
	return NewRanges(ps), nil
}

func parseRanges(r io.Reader, name string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		p, err := netip.ParsePrefix(text)
		if err != nil {
			a, aerr := netip.ParseAddr(text)
			if aerr != nil {
				return nil, fmt.Errorf("ingest: ranges %s:%d: %q is not a CIDR or address", name, line, text)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Addr().Is4In6() && p.Bits() < 96 {
			// It would reach beyond the IPv4-mapped block; unmapped for the
			// IPv4 table it has no meaning.
			return nil, fmt.Errorf("ingest: ranges %s:%d: %q: an IPv4-mapped prefix must be /96 or longer", name, line, text)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ingest: ranges %s: %w", name, err)
	}
	return out, nil
}

// NewRanges builds a set from prefixes.
func NewRanges(prefixes []netip.Prefix) *Ranges {
	r := &Ranges{n: len(prefixes)}
	for _, p := range prefixes {
		if p.Addr().Is4In6() && p.Bits() < 96 {
			// Wider than the IPv4-mapped block: all of IPv4 (addresses are
			// unmapped before lookup) and the IPv6 addresses around it.
			r.v4 = append(r.v4, span{lo: netip.IPv4Unspecified().As16(), hi: netip.AddrFrom4([4]byte{255, 255, 255, 255}).As16()})
			p = p.Masked()
			r.v6 = append(r.v6, span{lo: p.Addr().As16(), hi: last(p).As16()})
			continue
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapBits(p)).Masked()
		s := span{lo: p.Addr().As16(), hi: last(p).As16()}
		if p.Addr().Is4() {
			r.v4 = append(r.v4, s)
		} else {
			r.v6 = append(r.v6, s)
		}
	}
	r.v4, r.v6 = merge(r.v4), merge(r.v6)
	return r
}

// unmapBits is how many prefix bits an IPv4-mapped prefix loses when unmapped.
func unmapBits(p netip.Prefix) int {
	if p.Addr().Is4In6() {
		return 96
	}
	return 0
}

func last(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func merge(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return bytes.Compare(a.lo[:], b.lo[:]) })
	out := spans[:0]
	for _, s := range spans {
		if n := len(out); n > 0 && adjoins(out[n-1].hi, s.lo) {
			if bytes.Compare(s.hi[:], out[n-1].hi[:]) > 0 {
				out[n-1].hi = s.hi
			}
			continue
		}
		out = append(out, s)
	}
	return out
}

// adjoins reports whether lo ≤ hi+1, so overlapping and adjacent ranges merge.
func adjoins(hi, lo [16]byte) bool {
	if bytes.Compare(lo[:], hi[:]) <= 0 {
		return true
	}
	for i := 15; i >= 0; i-- { // hi+1; an overflow means hi was the last address
		if hi[i]++; hi[i] != 0 {
			return bytes.Compare(lo[:], hi[:]) <= 0
		}
	}
	return true
}

// Contains reports whether addr is in one of the ranges.
func (r *Ranges) Contains(addr netip.Addr) bool {
	if r == nil || !addr.IsValid() {
		return false
	}
	addr = addr.Unmap()
	spans := r.v6
	if addr.Is4() {
		spans = r.v4
	}
	a := addr.As16()
	i, _ := slices.BinarySearchFunc(spans, a, func(s span, t [16]byte) int {
		if bytes.Compare(s.hi[:], t[:]) < 0 {
			return -1
		}
		if bytes.Compare(s.lo[:], t[:]) > 0 {
			return 1
		}
		return 0
	})
	return i < len(spans) && bytes.Compare(spans[i].lo[:], a[:]) <= 0 && bytes.Compare(a[:], spans[i].hi[:]) <= 0
}

// Len is the number of prefixes loaded (before merging).
func (r *Ranges) Len() int {
	if r == nil {
		return 0
	}
	return r.n
}
