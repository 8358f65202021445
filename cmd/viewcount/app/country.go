package app

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/viewcount/viewcount/ingest/geo"
)

// openCountries opens the country database ingest looks client addresses
// up in: nil for "off". An explicit path (--country-db or
// VIEWCOUNT_COUNTRY_DB) that cannot be opened is an error at start; the
// default one missing is only a warning, since a country is a dashboard
// dimension, not something a view needs to be counted.
func openCountries(path string, logger *slog.Logger) (*geo.DB, error) {
	logger = logger.With("component", "geo")
	if path == "off" {
		logger.Info("country lookup off (--country-db off)")
		return nil, nil
	}
	explicit := path != ""
	if !explicit {
		path = geo.DefaultPath()
		if path == "" {
			logger.Warn("no cache directory known to look for the country database in: views get no country; set --country-db")
			return nil, nil
		}
	}
	db, err := geo.Open(path)
	switch {
	case err == nil:
		logger.Info("country database loaded", "path", path, "bytes", db.Size())
		return db, nil
	case !explicit && errors.Is(err, fs.ErrNotExist):
		logger.Warn("country database not found: views get no country (run `make geo`, or set --country-db)", "path", path)
		return nil, nil
	}
	return nil, fmt.Errorf("--country-db: %w", err)
}
