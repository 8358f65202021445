// Package geo maps a client address to its country with an MMDB country
// database (the MaxMind DB format), for ingest to record a view's country
// before the address is dropped. It returns only the ISO 3166-1 alpha-2
// code: nothing finer is looked up, kept or logged.
//
// The default database is the npm package
// @ip-location-db/geo-whois-asn-country-mmdb (RIR whois, ASN and geofeed
// data; the data is CC BY 4.0 by the NRO), pinned to Version and fetched by
// `make geo` into the cache, the way libchdb.so is.
package geo

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync/atomic"

	"github.com/oschwald/maxminddb-golang/v2"
	"github.com/viewcount/viewcount"
)

// Version is the pinned release of the default database; `make geo` fetches
// this one (the Makefile's GEO_VERSION must match).
const Version = "2.3.2026061719"

// EnvPath names the environment variable that overrides DefaultPath.
const EnvPath = "VIEWCOUNT_COUNTRY_DB"

// FileName is the database file inside the package: IPv4 and IPv6 in one.
const FileName = "geo-whois-asn-country.mmdb"

// DefaultPath is where the default database is looked for: $VIEWCOUNT_COUNTRY_DB
// if set, else where `make geo` puts it:
// $XDG_CACHE_HOME/viewcount/geo/<Version>/geo-whois-asn-country.mmdb (~/.cache
// when XDG_CACHE_HOME is unset). Empty if no cache directory is known.
func DefaultPath() string {
	if p := os.Getenv(EnvPath); p != "" {
		return p
	}
	return viewcount.CacheDir("geo", Version, FileName)
}

// DB is an open country database, memory-mapped: its pages are the OS's
// page cache, shared and reclaimable, not Go heap. Safe for concurrent use.
type DB struct {
	r    *maxminddb.Reader
	size int64
	// memo maps a record's offset in the file to its country, direct-mapped:
	// a country database has a few hundred distinct records, and decoding
	// one costs an allocation (the record escapes through an interface)
	// that the hot path must not pay. An entry packs offset+1 above 16 bits
	// and the code's two letters below; 0 is empty. Lock-free: a racing
	// writer only ever replaces an entry with another correct one.
	memo [memoSize]atomic.Uint64
}

const (
	memoBits = 10
	memoSize = 1 << memoBits
)

// ErrNoCountries: the file is an MMDB database whose records carry no
// country code, e.g. an ASN or city-name-only database.
var ErrNoCountries = errors.New("geo: not a country database")

// Open maps the database at path and checks that it answers with country
// codes. Errors name the path.
func Open(path string) (*DB, error) {
	r, err := maxminddb.Open(path)
	if err != nil {
		return nil, fmt.Errorf("geo: open %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("geo: %s: %w", path, err)
	}
	db := &DB{r: r, size: st.Size()}
	if err := db.check(); err != nil {
		_ = r.Close()
		return nil, fmt.Errorf("geo: %s: %w", path, err)
	}
	return db, nil
}

// check looks up a few long-allocated addresses (a US and a German block
// among them): a database that knows none of their countries is the wrong
// file, better refused at start than silently recording nothing.
func (d *DB) check() error {
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "193.99.144.80", "2001:4860:4860::8888"} {
		if d.Country(netip.MustParseAddr(s)) != "" {
			return nil
		}
	}
	return ErrNoCountries
}

// record is the part of a record that is read. Both layouts in use are
// accepted: ip-location-db's flat "country_code", and MaxMind's (GeoLite2
// Country and compatible) "country": {"iso_code"}.
type record struct {
	CountryCode string `maxminddb:"country_code"`
	Country     struct {
		ISOCode string `maxminddb:"iso_code"`
	} `maxminddb:"country"`
}

// Country returns the upper-case ISO 3166-1 alpha-2 code of addr's country,
// or "" when the database does not know it (or holds something else
// there). IPv4-mapped IPv6 addresses are looked up as IPv4.
func (d *DB) Country(addr netip.Addr) string {
	res := d.r.Lookup(addr.Unmap())
	if !res.Found() {
		return ""
	}
	off := uint64(res.Offset()) + 1
	slot := &d.memo[(off*0x9E3779B97F4A7C15)>>(64-memoBits)]
	if e := slot.Load(); e>>16 == off {
		return code(byte(e>>8), byte(e))
	}
	var rec record
	if err := res.Decode(&rec); err != nil {
		return ""
	}
	c := rec.CountryCode
	if c == "" {
		c = rec.Country.ISOCode
	}
	if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
		return "" // not memoised: rare, and nothing a code table can return
	}
	if off < 1<<48 {
		slot.Store(off<<16 | uint64(c[0])<<8 | uint64(c[1]))
	}
	return code(c[0], c[1])
}

// codes holds every pair of upper-case letters ("AAABAC…"), so a memoised
// country is a slice of it, never a new string.
var codes = func() string {
	b := make([]byte, 0, 26*26*2)
	for x := byte('A'); x <= 'Z'; x++ {
		for y := byte('A'); y <= 'Z'; y++ {
			b = append(b, x, y)
		}
	}
	return string(b)
}()

func code(a, b byte) string {
	i := (int(a-'A')*26 + int(b-'A')) * 2
	return codes[i : i+2]
}

// Size is the database file's size in bytes: what it maps.
func (d *DB) Size() int64 { return d.size }

// Close unmaps the database; Country must not be called after it.
func (d *DB) Close() error { return d.r.Close() }
