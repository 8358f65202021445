// Package asn maps a client address to its autonomous system number, for
// ingest to record on each view before the address is dropped. The number
// names a network operator (an ISP, a cloud, a hosting company), not a
// person: it is kept on the event so that the datacenter rule can judge
// it and an operator can see which provider sent a datacenter view. Only
// the number is looked up; the organisation names in the data are not
// read, and no address is kept or logged.
//
// The default data is the npm package @ip-location-db/asn (RouteViews,
// the five RIRs' and DB-IP's IP-to-ASN data, CC BY 4.0: attribution to
// routeviews.org and DB-IP.com), pinned to Version and fetched by `make asn`
// into the cache, the way the country database is. It ships as CSV (the
// registry has no MMDB build of it), so Open reads the two files into
// sorted range tables: 8.7 MB of heap for 515,158 ranges, read in about
// 0.3 s at start.
package asn

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/viewcount/viewcount"
)

// Version is the pinned release of the default data; `make asn` fetches
// this one (the Makefile's ASN_VERSION must match).
const Version = "2.3.2026061719"

// EnvPath names the environment variable that overrides DefaultPath.
const EnvPath = "VIEWCOUNT_ASN_DB"

// The files Open reads from the data directory: IPv4 ranges as numbers,
// IPv6 ranges as addresses. Lines are "start,end,asn,organisation".
const (
	FileIPv4 = "asn-ipv4-num.csv"
	FileIPv6 = "asn-ipv6.csv"
)

// DefaultPath is the directory the default data is looked for in:
// $VIEWCOUNT_ASN_DB if set, else where `make asn` puts it:
// $XDG_CACHE_HOME/viewcount/asn/<Version> (~/.cache when XDG_CACHE_HOME is
// unset). Empty if no cache directory is known.
func DefaultPath() string {
	if p := os.Getenv(EnvPath); p != "" {
		return p
	}
	return viewcount.CacheDir("asn", Version)
}

// DB is the loaded data: for each family, range starts in ascending order,
// the inclusive end and the AS number of each. Read-only once open, so
// safe for concurrent use.
type DB struct {
	v4Start, v4End []uint32
	v4ASN          []uint32
	v6Start, v6End []u128
	v6ASN          []uint32
}

type u128 struct{ hi, lo uint64 }

func (a u128) less(b u128) bool { return a.hi < b.hi || a.hi == b.hi && a.lo < b.lo }

// next and prev are a±1; callers never step past either end (a range's
// end is below the following start, so neither is at a limit there).
func (a u128) next() u128 {
	if a.lo == ^uint64(0) {
		return u128{a.hi + 1, 0}
	}
	return u128{a.hi, a.lo + 1}
}

func (a u128) prev() u128 {
	if a.lo == 0 {
		return u128{a.hi - 1, ^uint64(0)}
	}
	return u128{a.hi, a.lo - 1}
}

func u128Of(a netip.Addr) u128 {
	b := a.As16()
	return u128{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

// ErrNoData: the files hold no ranges, or none that names well-known
// networks (see check), so they are not this data.
var ErrNoData = errors.New("asn: no usable AS number ranges")

// Open reads the data from dir (FileIPv4 and FileIPv6). Errors name the
// file and line.
func Open(dir string) (*DB, error) {
	db := &DB{}
	if err := readFile(filepath.Join(dir, FileIPv4), db.addV4); err != nil {
		return nil, err
	}
	if err := readFile(filepath.Join(dir, FileIPv6), db.addV6); err != nil {
		return nil, err
	}
	if err := db.check(); err != nil {
		return nil, fmt.Errorf("asn: %s: %w", dir, err)
	}
	// Exact-size copies: append's growth left up to a quarter spare.
	db.v4Start, db.v4End, db.v4ASN = slices.Clone(db.v4Start), slices.Clone(db.v4End), slices.Clone(db.v4ASN)
	db.v6Start, db.v6End, db.v6ASN = slices.Clone(db.v6Start), slices.Clone(db.v6End), slices.Clone(db.v6ASN)
	return db, nil
}

// check refuses data that does not know a few long-standing assignments:
// the wrong files are better refused at start than silently recording
// nothing.
func (d *DB) check() error {
	for addr, want := range map[string]uint32{"8.8.8.8": 15169, "1.1.1.1": 13335, "2001:4860:4860::8888": 15169} {
		if d.ASN(netip.MustParseAddr(addr)) != want {
			return ErrNoData
		}
	}
	return nil
}

// readFile feeds each line's first three fields to add, in order.
func readFile(path string, add func(start, end string, asn uint32) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("asn: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for n := 1; ; n++ {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			start, end, num, ok := fields(line)
			if !ok {
				return fmt.Errorf("asn: %s line %d: want start,end,asn,…", path, n)
			}
			asn, perr := strconv.ParseUint(num, 10, 32)
			if perr == nil {
				perr = add(start, end, uint32(asn))
			}
			if perr != nil {
				return fmt.Errorf("asn: %s line %d: %w", path, n, perr)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("asn: %s line %d: %w", path, n, err)
		}
	}
}

// fields splits off the first three comma-separated fields of a line; the
// organisation after them (quoted when it holds commas) is not read.
func fields(line []byte) (start, end, asn string, ok bool) {
	var f [3]string
	for i := range f {
		j := 0
		for j < len(line) && line[j] != ',' && line[j] != '\n' && line[j] != '\r' {
			j++
		}
		if i < 2 && (j == len(line) || line[j] != ',') {
			return "", "", "", false
		}
		f[i] = string(line[:j])
		if j < len(line) {
			j++
		}
		line = line[j:]
	}
	return f[0], f[1], f[2], f[0] != "" && f[1] != "" && f[2] != ""
}

// addV4 appends a range. The data is sorted by start but not free of
// overlaps (a more specific announcement inside or across a wider one, as
// in the DoD's blocks): the later range wins where they overlap, and what
// is left of the earlier one after it is kept.
func (d *DB) addV4(start, end string, asn uint32) error {
	s64, err1 := strconv.ParseUint(start, 10, 32)
	e64, err2 := strconv.ParseUint(end, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	s, e := uint32(s64), uint32(e64)
	if e < s {
		return errOrder
	}
	if n := len(d.v4Start); n > 0 && s <= d.v4End[n-1] {
		if s < d.v4Start[n-1] {
			return errOrder
		}
		prevEnd, prevASN := d.v4End[n-1], d.v4ASN[n-1]
		if s == d.v4Start[n-1] {
			d.v4Start, d.v4End, d.v4ASN = d.v4Start[:n-1], d.v4End[:n-1], d.v4ASN[:n-1]
		} else {
			d.v4End[n-1] = s - 1
		}
		d.v4Start, d.v4End, d.v4ASN = append(d.v4Start, s), append(d.v4End, e), append(d.v4ASN, asn)
		if prevEnd > e {
			d.v4Start, d.v4End, d.v4ASN = append(d.v4Start, e+1), append(d.v4End, prevEnd), append(d.v4ASN, prevASN)
		}
		return nil
	}
	d.v4Start, d.v4End, d.v4ASN = append(d.v4Start, s), append(d.v4End, e), append(d.v4ASN, asn)
	return nil
}

var errOrder = errors.New("ranges out of order")

// addV6 is addV4 for IPv6.
func (d *DB) addV6(start, end string, asn uint32) error {
	sa, err1 := netip.ParseAddr(start)
	ea, err2 := netip.ParseAddr(end)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if !sa.Is6() || !ea.Is6() {
		return errors.New("not an IPv6 range")
	}
	s, e := u128Of(sa), u128Of(ea)
	if e.less(s) {
		return errOrder
	}
	if n := len(d.v6Start); n > 0 && !d.v6End[n-1].less(s) {
		if s.less(d.v6Start[n-1]) {
			return errOrder
		}
		prevEnd, prevASN := d.v6End[n-1], d.v6ASN[n-1]
		if s == d.v6Start[n-1] {
			d.v6Start, d.v6End, d.v6ASN = d.v6Start[:n-1], d.v6End[:n-1], d.v6ASN[:n-1]
		} else {
			d.v6End[n-1] = s.prev()
		}
		d.v6Start, d.v6End, d.v6ASN = append(d.v6Start, s), append(d.v6End, e), append(d.v6ASN, asn)
		if e.less(prevEnd) {
			d.v6Start, d.v6End, d.v6ASN = append(d.v6Start, e.next()), append(d.v6End, prevEnd), append(d.v6ASN, prevASN)
		}
		return nil
	}
	d.v6Start, d.v6End, d.v6ASN = append(d.v6Start, s), append(d.v6End, e), append(d.v6ASN, asn)
	return nil
}

// ASN returns the AS number addr is announced by, or 0 when unknown.
// IPv4-mapped IPv6 addresses are looked up as IPv4. It costs a binary
// search (about 19 steps) and allocates nothing.
func (d *DB) ASN(addr netip.Addr) uint32 {
	addr = addr.Unmap()
	if addr.Is4() {
		b := addr.As4()
		a := binary.BigEndian.Uint32(b[:])
		i, found := slices.BinarySearch(d.v4Start, a)
		if !found {
			i--
		}
		if i >= 0 && a <= d.v4End[i] {
			return d.v4ASN[i]
		}
		return 0
	}
	if !addr.Is6() {
		return 0
	}
	a := u128Of(addr)
	i, found := slices.BinarySearchFunc(d.v6Start, a, func(x, y u128) int {
		switch {
		case x.less(y):
			return -1
		case y.less(x):
			return 1
		}
		return 0
	})
	if !found {
		i--
	}
	if i >= 0 && !d.v6End[i].less(a) {
		return d.v6ASN[i]
	}
	return 0
}

// Ranges is the number of ranges loaded, IPv4 and IPv6.
func (d *DB) Ranges() int { return len(d.v4Start) + len(d.v6Start) }
