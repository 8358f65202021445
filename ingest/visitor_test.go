package ingest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/crypto/blake2b"
)

var (
	testSalt  = bytes.Repeat([]byte{7}, SaltLen)
	otherSalt = bytes.Repeat([]byte{8}, SaltLen)
)

const chromeUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"

func TestVisitorID(t *testing.T) {
	base := VisitorID(testSalt, "example.com", "203.0.113.7", chromeUA)
	if base == 0 {
		t.Fatal("zero id")
	}
	if again := VisitorID(testSalt, "example.com", "203.0.113.7", chromeUA); again != base {
		t.Fatal("not deterministic")
	}
	if VisitorID(testSalt, "example.com", "::ffff:203.0.113.7", chromeUA) != base {
		t.Fatal("IPv4-mapped IPv6 differs from IPv4")
	}
	differs := func(name string, id uint64) {
		t.Helper()
		if id == base {
			t.Fatalf("%s: same id", name)
		}
	}
	differs("salt", VisitorID(otherSalt, "example.com", "203.0.113.7", chromeUA))
	differs("site", VisitorID(testSalt, "example.org", "203.0.113.7", chromeUA))
	differs("ip", VisitorID(testSalt, "example.com", "203.0.113.8", chromeUA))
	differs("ua", VisitorID(testSalt, "example.com", "203.0.113.7", chromeUA+" "))
	differs("unparseable ip", VisitorID(testSalt, "example.com", "", chromeUA))
	// Length prefixes: moving bytes between adjacent fields changes the id.
	if VisitorID(testSalt, "ab", "1.2.3.4", "c") == VisitorID(testSalt, "a", "1.2.3.4", "bc") {
		t.Fatal("field boundary ambiguity")
	}
	if visitorHash(testSalt, "ab", []byte("c"), chromeUA) == visitorHash(testSalt, "a", []byte("bc"), chromeUA) {
		t.Fatal("site/ip boundary ambiguity")
	}
	if visitorHash(testSalt, "a", []byte("bc"), "d") == visitorHash(testSalt, "a", []byte("b"), "cd") {
		t.Fatal("ip/ua boundary ambiguity")
	}
}

func TestNetworkID(t *testing.T) {
	ip := netip.MustParseAddr
	same := func(a, b string) {
		t.Helper()
		if NetworkID(testSalt, ip(a)) != NetworkID(testSalt, ip(b)) {
			t.Fatalf("%s and %s: different networks", a, b)
		}
	}
	differ := func(a, b string) {
		t.Helper()
		if NetworkID(testSalt, ip(a)) == NetworkID(testSalt, ip(b)) {
			t.Fatalf("%s and %s: same network", a, b)
		}
	}
	same("203.0.113.7", "203.0.113.250")
	same("203.0.113.7", "::ffff:203.0.113.9")
	differ("203.0.113.7", "203.0.114.7")
	same("2001:db8:1::1", "2001:db8:1:ffff::2")
	differ("2001:db8:1::1", "2001:db8:2::1")
	// An IPv4 /24 and an IPv6 /48 starting with the same bytes differ.
	differ("32.1.13.1", "2001:db8::1")
	if NetworkID(testSalt, ip("203.0.113.7")) == NetworkID(otherSalt, ip("203.0.113.7")) {
		t.Fatal("salt ignored")
	}
	if NetworkID(testSalt, ip("203.0.113.7")) == VisitorID(testSalt, "", "203.0.113.7", "") {
		t.Fatal("network and visitor ids share a domain")
	}
	if NetworkID(testSalt, netip.Addr{}) != 0 {
		t.Fatal("invalid address should give 0")
	}
}

func BenchmarkVisitorID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		VisitorID(testSalt, "example.com", "203.0.113.7", chromeUA)
	}
}

func BenchmarkNetworkID(b *testing.B) {
	b.ReportAllocs()
	addr := netip.MustParseAddr("2001:db8:1::1")
	for b.Loop() {
		NetworkID(testSalt, addr)
	}
}

// BenchmarkVisitorHashChoice backs the choice documented in visitor.go: the
// same input through the candidate keyed hashes.
func BenchmarkVisitorHashChoice(b *testing.B) {
	ip := []byte{203, 0, 113, 7}
	msg := func(dst []byte) []byte {
		dst = appendString(dst, "example.com")
		dst = appendField(dst, ip)
		return appendString(dst, chromeUA)
	}
	b.Run("blake2b-keyblock", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			visitorHash(testSalt, "example.com", ip, chromeUA)
		}
	})
	b.Run("blake2b-keyed-New", func(b *testing.B) {
		b.ReportAllocs()
		var buf [512]byte
		for b.Loop() {
			h, _ := blake2b.New(8, testSalt)
			h.Write(msg(buf[:0]))
			var out [8]byte
			_ = binary.LittleEndian.Uint64(h.Sum(out[:0]))
		}
	})
	b.Run("hmac-sha256", func(b *testing.B) {
		b.ReportAllocs()
		var buf [512]byte
		for b.Loop() {
			m := hmac.New(sha256.New, testSalt)
			m.Write(msg(buf[:0]))
			var out [32]byte
			_ = binary.LittleEndian.Uint64(m.Sum(out[:0]))
		}
	})
}
