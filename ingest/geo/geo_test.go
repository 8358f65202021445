package geo

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

// openDefault opens the database serve would use. It fails rather than
// skips when the file is missing: `make test` fetches it (`make geo`).
func openDefault(t testing.TB) *DB {
	t.Helper()
	path := DefaultPath()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("country database missing (%v): run `make geo`, or set %s", err, EnvPath)
	}
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestCountry(t *testing.T) {
	db := openDefault(t)
	f := func(addr, want string) {
		t.Helper()
		if got := db.Country(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Country(%s) = %q, want %q", addr, got, want)
		}
	}
	f("8.8.8.8", "US")              // Google Public DNS
	f("2001:4860:4860::8888", "US") // the same over IPv6
	f("193.99.144.80", "DE")        // heise.de, Hanover: RIPE allocation to Heise Medien
	f("::ffff:193.99.144.80", "DE") // IPv4-mapped: looked up as IPv4
	f("133.242.0.3", "JP")          // SAKURA Internet, APNIC
	f("127.0.0.1", "")              // loopback: no country
	f("10.1.2.3", "")               // private
	f("192.0.2.1", "")              // documentation range
	if db.Size() < 1<<20 {
		t.Errorf("size %d: suspiciously small", db.Size())
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.mmdb")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	junk := filepath.Join(dir, "junk.mmdb")
	if err := os.WriteFile(junk, []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(junk); err == nil {
		t.Error("junk file opened")
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv(EnvPath, "")
	t.Setenv("XDG_CACHE_HOME", "/c")
	if got, want := DefaultPath(), "/c/viewcount/geo/"+Version+"/"+FileName; got != want {
		t.Errorf("DefaultPath = %q, want %q", got, want)
	}
	t.Setenv(EnvPath, "/x/y.mmdb")
	if got := DefaultPath(); got != "/x/y.mmdb" {
		t.Errorf("with %s: %q", EnvPath, got)
	}
}

// BenchmarkCountry is the lookup every hit pays (when no CDN header
// names the country): a mix of IPv4 and IPv6 addresses.
func BenchmarkCountry(b *testing.B) {
	db := openDefault(b)
	addrs := []netip.Addr{
		netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("193.99.144.80"),
		netip.MustParseAddr("133.242.0.3"), netip.MustParseAddr("2001:4860:4860::8888"),
		netip.MustParseAddr("81.2.69.160"), netip.MustParseAddr("2a00:1450:4001:82b::200e"),
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = db.Country(addrs[i%len(addrs)])
		i++
	}
}
