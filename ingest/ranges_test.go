package ingest

import (
	"net/netip"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestRanges(t *testing.T) {
	r, err := ParseRanges(strings.NewReader(`
# comment
10.1.0.0/16
10.2.0.0/16   # adjacent blocks merge
192.0.2.7
2001:db8::/32
::ffff:198.51.100.0/120
`), "test")
	if err != nil {
		t.Fatal(err)
	}
	f := func(ip string, want bool) {
		t.Helper()
		if got := r.Contains(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Contains(%s) = %v, want %v", ip, got, want)
		}
	}
	f("10.1.0.0", true)
	f("10.1.255.255", true)
	f("10.2.3.4", true)
	f("10.3.0.0", false)
	f("10.0.255.255", false)
	f("192.0.2.7", true)
	f("192.0.2.8", false)
	f("::ffff:10.1.2.3", true) // mapped form of an IPv4 address
	f("198.51.100.9", true)    // mapped prefix, IPv4 address
	f("2001:db8:1::1", true)
	f("2001:db9::1", false)
	f("1.1.1.1", false)
	if r.Len() != 5 {
		t.Errorf("Len = %d", r.Len())
	}
	var nilRanges *Ranges
	if nilRanges.Contains(netip.MustParseAddr("10.1.0.0")) {
		t.Error("nil ranges contain something")
	}
}

func TestRangesErrors(t *testing.T) {
	_, err := ParseRanges(strings.NewReader("10.0.0.0/8\nnot-a-cidr\n"), "dc.txt")
	if err == nil || !strings.Contains(err.Error(), "dc.txt:2") {
		t.Fatalf("err = %v, want one naming dc.txt:2", err)
	}
	if _, err := LoadRanges("/nonexistent/file"); err == nil {
		t.Fatal("missing file loaded")
	}
}

// An IPv4-mapped prefix shorter than /96 reaches outside the mapped block:
// the file is refused, and NewRanges takes it for what it covers (all of
// IPv4 and the IPv6 around the mapped block) instead of a span covering "::".
func TestRangesShortMappedPrefix(t *testing.T) {
	if _, err := ParseRanges(strings.NewReader("::ffff:10.0.0.0/90\n"), "dc.txt"); err == nil || !strings.Contains(err.Error(), "dc.txt:1") {
		t.Fatalf("err = %v, want one naming dc.txt:1", err)
	}
	r := NewRanges([]netip.Prefix{netip.MustParsePrefix("::ffff:10.0.0.0/90")})
	if r.Contains(netip.MustParseAddr("::")) || r.Contains(netip.MustParseAddr("2001:db8::1")) {
		t.Error("a /90 mapped prefix matched outside itself")
	}
	for _, in := range []string{"::ffff:10.1.2.3", "192.0.2.1", "::fffe:1:2"} {
		if !r.Contains(netip.MustParseAddr(in)) {
			t.Errorf("a /90 mapped prefix lost %s", in)
		}
	}
}

func TestExampleDatacenterList(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	r, err := LoadRanges(filepath.Join(filepath.Dir(file), "lists", "datacenter-example.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() < 10 || !r.Contains(netip.MustParseAddr("34.64.1.1")) || r.Contains(netip.MustParseAddr("81.2.69.160")) {
		t.Fatalf("example list: %d ranges", r.Len())
	}
}

func FuzzRanges(f *testing.F) {
	f.Add("10.0.0.0/8\n# x\n2001:db8::/32", "10.1.2.3")
	f.Fuzz(func(t *testing.T, list, ip string) {
		r, err := ParseRanges(strings.NewReader(list), "fuzz")
		if err != nil {
			return
		}
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return
		}
		// Contains must agree with a linear scan of the parsed prefixes.
		ps, _ := parseRanges(strings.NewReader(list), "fuzz")
		want := false
		for _, p := range ps {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-unmapBits(p))
			if p.Contains(a.Unmap()) {
				want = true
			}
		}
		if got := r.Contains(a); got != want {
			t.Fatalf("Contains(%s) = %v, linear scan %v (list %q)", a, got, want, list)
		}
	})
}

func BenchmarkRangesContains(b *testing.B) {
	var ps []netip.Prefix
	for i := 0; i < 10000; i++ {
		ps = append(ps, netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(i >> 8), byte(i), 0, 0}), 24))
	}
	r := NewRanges(ps)
	a := netip.MustParseAddr("81.2.69.160")
	for b.Loop() {
		r.Contains(a)
	}
}
