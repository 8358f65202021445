package app

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/viewcount/viewcount/ingest/asn"
)

// openASNs loads the AS-number data ingest looks client addresses up in:
// nil for "off". An explicit directory (--asn-db or VIEWCOUNT_ASN_DB) that
// cannot be read is an error at start; the default one missing is only a
// warning: views then carry no AS number, and the datacenter rule has only
// --datacenter-ranges to go by.
func openASNs(dir string, logger *slog.Logger) (*asn.DB, error) {
	logger = logger.With("component", "asn")
	if dir == "off" {
		logger.Info("AS-number lookup off (--asn-db off)")
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
		logger.Info("AS-number data loaded", "dir", dir, "ranges", db.Ranges())
		return db, nil
	case !explicit && errors.Is(err, fs.ErrNotExist):
		logger.Warn("AS-number data not found: views get no AS number, hosting networks are not judged (run `make asn`, or set --asn-db)", "dir", dir)
		return nil, nil
	}
	return nil, fmt.Errorf("--asn-db: %w", err)
}
