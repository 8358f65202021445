package loadgen

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"slices"

	"github.com/viewcount/viewcount/ingest/asn"
	"github.com/viewcount/viewcount/validate/judge"
)

// HostingFilter reports the addresses the validator judges datacenter by
// their AS number (the built-in hosting list), for Mix.Hosting, so the
// generator's humans keep clear of them. dir is read as the server's
// --asn-db: "off" is none, "" the cached default (missing: a warning and no
// filter), anything else a directory that must open. Nil without AS-number
// data.
func HostingFilter(dir string, logger *slog.Logger) (func(netip.Addr) bool, error) {
	logger = logger.With("component", "asn")
	if dir == "off" {
		return nil, nil
	}
	explicit := dir != ""
	if !explicit {
		dir = asn.DefaultPath()
		if dir == "" {
			logger.Warn("no cache directory known to look for the AS-number data in: views get no AS number; set --asn-db")
			return nil, nil
		}
	}
	db, err := asn.Open(dir)
	switch {
	case err == nil:
	case !explicit && errors.Is(err, fs.ErrNotExist):
		logger.Warn("AS-number data not found: views get no AS number, hosting networks are not judged (run `make asn`, or set --asn-db)", "dir", dir)
		return nil, nil
	default:
		return nil, fmt.Errorf("--asn-db: %w", err)
	}
	hosting := judge.HostingASNs()
	return func(a netip.Addr) bool { return slices.Contains(hosting, db.ASN(a)) }, nil
}
