package judge

import (
	"strings"
	"testing"

	"github.com/viewcount/viewcount"
)

// The built-in list parses, and holds the big clouds and none of the
// networks people browse through.
func TestDefaultHostingASNs(t *testing.T) {
	s, err := newHostingASNs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 40 {
		t.Errorf("%d hosting ASNs, want 40 (update this count with the list)", len(s))
	}
	for _, a := range []uint32{16509, 14618, 396982, 8075, 31898, 14061, 24940, 16276, 63949, 20473, 45102, 132203, 51167, 12876} {
		if !s.has(a) {
			t.Errorf("AS%d missing", a)
		}
	}
	// Cloudflare, Akamai, Fastly (WARP, iCloud Private Relay), Google's
	// main network, M247 (VPN exits), Deutsche Telekom, Comcast.
	for _, a := range []uint32{0, 13335, 36183, 20940, 54113, 15169, 9009, 3320, 7922} {
		if s.has(a) {
			t.Errorf("AS%d listed", a)
		}
	}
}

func TestParseASNs(t *testing.T) {
	got, err := parseASNs(strings.NewReader("# c\n16509 # AWS\n\nAS14061\nas24940  \n"), "x")
	if err != nil || len(got) != 3 || got[0] != 16509 || got[1] != 14061 || got[2] != 24940 {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, bad := range []string{"AS\n", "0\n", "4294967296\n", "16509,\n", "AWS\n"} {
		if _, err := parseASNs(strings.NewReader(bad), "list.txt"); err == nil || !strings.Contains(err.Error(), "list.txt line 1") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	if _, err := newHostingASNs([]uint32{0}); err == nil {
		t.Error("AS 0 accepted as a hosting network")
	}
}

// A view from a hosting network is Datacenter; the AS number alone decides
// (ingest found no configured range), extra numbers add to the list, and
// unknown (0) and eyeball networks pass.
func TestHostingASNRule(t *testing.T) {
	r := newTestRules(t, Config{ExtraHostingASNs: []uint32{64500}})
	var visitor uint64
	f := func(asn uint32, want viewcount.Reason) {
		t.Helper()
		visitor++
		e := viewcount.Event{Time: t0, Site: "example.com", Page: "/", UA: uaChromium156, Visitor: visitor, Network: visitor,
			Source: viewcount.SourcePixel, ASN: asn, Headers: hChromium}
		if got := r.Judge(&e); got != want {
			t.Errorf("AS%d: %s, want %s", asn, got, want)
		}
	}
	f(16509, viewcount.Datacenter) // AWS
	f(24940, viewcount.Datacenter) // Hetzner
	f(64500, viewcount.Datacenter) // the operator's extra
	f(3320, viewcount.Valid)       // Deutsche Telekom
	f(13335, viewcount.Valid)      // Cloudflare (WARP, Private Relay)
	f(0, viewcount.Valid)          // unknown
}
