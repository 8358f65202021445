package judge

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// defaultHostingASNs is the built-in list of hosting and cloud networks.
//
//go:embed lists/hosting-asns.txt
var defaultHostingASNs string

// hostingASNs is a set of AS numbers whose views are datacenter traffic:
// the built-in list plus Config.ExtraHostingASNs. Immutable once built.
type hostingASNs map[uint32]struct{}

func newHostingASNs(extra []uint32) (hostingASNs, error) {
	asns, err := parseASNs(strings.NewReader(defaultHostingASNs), "lists/hosting-asns.txt")
	if err != nil {
		return nil, err // a bad embedded list is a build bug; TestDefaultHostingASNs guards it
	}
	s := make(hostingASNs, len(asns)+len(extra))
	for _, a := range append(asns, extra...) {
		if a == 0 {
			return nil, fmt.Errorf("validate: hosting AS number 0: 0 means unknown")
		}
		s[a] = struct{}{}
	}
	return s, nil
}

// has reports whether asn (0: unknown) is a hosting network's.
func (s hostingASNs) has(asn uint32) bool {
	if asn == 0 {
		return false
	}
	_, ok := s[asn]
	return ok
}

// parseASNs reads one AS number per line ("16509", "AS16509"); '#' starts a
// comment. Errors name the source and line.
func parseASNs(r io.Reader, source string) ([]uint32, error) {
	var out []uint32
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		num := strings.TrimPrefix(strings.ToUpper(line), "AS")
		a, err := strconv.ParseUint(num, 10, 32)
		if err != nil || a == 0 {
			return nil, fmt.Errorf("validate: %s line %d: %q is not an AS number", source, n, line)
		}
		out = append(out, uint32(a))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("validate: read %s: %w", source, err)
	}
	return out, nil
}

// LoadASNs reads an operator's AS-number list (the format of
// lists/hosting-asns.txt) for Config.ExtraHostingASNs.
func LoadASNs(r io.Reader, source string) ([]uint32, error) { return parseASNs(r, source) }

// HostingASNs returns the built-in hosting and cloud AS numbers
// (lists/hosting-asns.txt), for tools that must keep clear of them, such
// as a load generator's human visitors.
func HostingASNs() []uint32 {
	asns, err := parseASNs(strings.NewReader(defaultHostingASNs), "lists/hosting-asns.txt")
	if err != nil {
		panic(err) // the embedded list is checked by TestDefaultHostingASNs
	}
	return asns
}
