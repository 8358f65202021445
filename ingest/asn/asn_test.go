package asn

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// openDefault opens the data serve would use. It fails rather than skips
// when the files are missing: `make test` fetches them (`make asn`).
func openDefault(t testing.TB) *DB {
	t.Helper()
	dir := DefaultPath()
	if _, err := os.Stat(filepath.Join(dir, FileIPv4)); err != nil {
		t.Fatalf("AS-number data missing (%v): run `make asn`, or set %s", err, EnvPath)
	}
	start := time.Now()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ranges loaded in %v", db.Ranges(), time.Since(start).Round(time.Millisecond))
	return db
}

func TestASN(t *testing.T) {
	db := openDefault(t)
	f := func(addr string, want uint32) {
		t.Helper()
		if got := db.ASN(netip.MustParseAddr(addr)); got != want {
			t.Errorf("ASN(%s) = %d, want %d", addr, got, want)
		}
	}
	f("8.8.8.8", 15169)              // Google Public DNS
	f("2001:4860:4860::8888", 15169) // the same over IPv6
	f("::ffff:8.8.8.8", 15169)       // IPv4-mapped: looked up as IPv4
	f("1.1.1.1", 13335)              // Cloudflare
	f("1.0.0.0", 13335)              // a range's first address
	f("1.0.0.255", 13335)            // and its last
	f("127.0.0.1", 0)                // loopback
	f("10.1.2.3", 0)                 // private
	f("192.0.2.1", 0)                // documentation range
	f("2001:db8::1", 0)              // documentation range, IPv6
	f("0.0.0.0", 0)
	f("255.255.255.255", 0)
	f("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 0)
	if n := db.Ranges(); n < 400_000 {
		t.Errorf("%d ranges: suspiciously few", n)
	}
}

func writeData(t *testing.T, v4, v6 string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{FileIPv4: v4, FileIPv6: v6} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The well-known assignments check demands; fixtures start from these.
const (
	goodV4 = "16843009,16843009,13335,\"Cloudflare, Inc.\"\n134744072,134744072,15169,Google LLC\n"
	goodV6 = "2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,15169,Google LLC\n"
)

func TestOpenFixtures(t *testing.T) {
	db, err := Open(writeData(t, goodV4, goodV6))
	if err != nil {
		t.Fatal(err)
	}
	if db.Ranges() != 3 || db.ASN(netip.MustParseAddr("8.8.8.9")) != 0 || db.ASN(netip.MustParseAddr("2001:4860::")) != 15169 {
		t.Errorf("fixture lookups wrong: %d ranges", db.Ranges())
	}
	bad := func(name, v4, v6, want string) {
		t.Helper()
		_, err := Open(writeData(t, v4, v6))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, want)
		}
	}
	bad("short line", "1,2\n"+goodV4, goodV6, FileIPv4+" line 1")
	bad("bad number", goodV4+"x,9,1,a\n", goodV6, FileIPv4+" line 3")
	bad("asn too big", goodV4+"134744080,134744090,4294967296,a\n", goodV6, "line 3")
	bad("out of order", goodV4+"5,6,7,a\n", goodV6, "out of order")
	bad("out of order, v6", goodV4, goodV6+"2001::,2001::1,7,a\n", "out of order")
	bad("end before start", "9,5,7,a\n"+goodV4, goodV6, "out of order")
	bad("v4 in the v6 file", goodV4, "1.2.3.4,1.2.3.5,7,a\n", "not an IPv6 range")
	bad("not the data", "1,2,3,a\n", goodV6, ErrNoData.Error())
	if _, err := Open(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing files: %v, want ErrNotExist", err)
	}
}

// Overlapping ranges, as the data has them: the later wins where they
// overlap, the earlier keeps the rest, on both sides of a nested one.
func TestOverlaps(t *testing.T) {
	v4 := "100,199,1,a\n150,249,2,b\n250,300,3,c\n260,270,4,d\n" + goodV4
	v6 := "2000::,2000::ff,1,a\n2000::10,2000::1f,2,b\n" + goodV6
	db, err := Open(writeData(t, v4, v6))
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]uint32{
		"0.0.0.99": 0, "0.0.0.100": 1, "0.0.0.149": 1, "0.0.0.150": 2, "0.0.0.249": 2, "0.0.0.250": 3, "0.0.1.3": 3,
		"0.0.1.4": 4, "0.0.1.14": 4, "0.0.1.15": 3, "0.0.1.44": 3, "0.0.1.45": 0,
		"2000::f": 1, "2000::10": 2, "2000::1f": 2, "2000::20": 1, "2000::ff": 1, "2000::100": 0,
	} {
		if got := db.ASN(netip.MustParseAddr(addr)); got != want {
			t.Errorf("ASN(%s) = %d, want %d", addr, got, want)
		}
	}
}

func BenchmarkASN(b *testing.B) {
	db := openDefault(b)
	addrs := []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("203.0.113.7"),
		netip.MustParseAddr("2001:4860:4860::8888"), netip.MustParseAddr("91.198.174.192")}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		db.ASN(addrs[i%len(addrs)])
		i++
	}
}
