package app

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/ingest/geo"
)

func TestOpenCountries(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	dir := t.TempDir()

	// off: no database, no error.
	if db, err := openCountries("off", logger); db != nil || err != nil {
		t.Fatalf("off: %v, %v", db, err)
	}
	// The default, found like serve finds it (make geo fetched it).
	def := geo.DefaultPath()
	if _, err := os.Stat(def); err != nil {
		t.Fatalf("default country database missing (%v): run `make geo`", err)
	}
	db, err := openCountries("", logger)
	if err != nil || db == nil {
		t.Fatalf("default: %v, %v", db, err)
	}
	// The default missing: a warning, no countries, no error.
	t.Setenv(geo.EnvPath, "")
	t.Setenv("XDG_CACHE_HOME", dir)
	logs.Reset()
	if db, err := openCountries("", logger); db != nil || err != nil {
		t.Fatalf("default missing: %v, %v", db, err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "make geo") ||
		!strings.Contains(logs.String(), "component=geo") {
		t.Errorf("default missing logged:\n%s", logs.String())
	}
	// An explicit path that does not open is an error at start.
	if _, err := openCountries(filepath.Join(dir, "nope.mmdb"), logger); err == nil || !strings.Contains(err.Error(), "--country-db") {
		t.Errorf("explicit missing: %v", err)
	}
	junk := filepath.Join(dir, "junk.mmdb")
	if err := os.WriteFile(junk, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := openCountries(junk, logger); err == nil {
		t.Error("junk file accepted")
	}
	// An explicit good path.
	if db, err := openCountries(def, logger); err != nil || db == nil {
		t.Errorf("explicit: %v, %v", db, err)
	}
}

func TestCountryFlags(t *testing.T) {
	t.Setenv("VIEWCOUNT_COUNTRY_DB", "")
	c, err := ParseConfig("serve", nil)
	if err != nil || c.Ingest.CountryHeader != "" || c.Ingest.CountryDB != "" {
		t.Fatalf("defaults: %v %q %q", err, c.Ingest.CountryHeader, c.Ingest.CountryDB)
	}
	c, err = ParseConfig("serve", []string{"--country-header", "CF-IPCountry", "--country-db", "off"})
	if err != nil || c.Ingest.CountryHeader != "CF-IPCountry" || c.Ingest.CountryDB != "off" {
		t.Fatalf("flags: %v %q %q", err, c.Ingest.CountryHeader, c.Ingest.CountryDB)
	}
	t.Setenv("VIEWCOUNT_COUNTRY_HEADER", "X-Country")
	t.Setenv("VIEWCOUNT_COUNTRY_DB", "/srv/country.mmdb")
	c, err = ParseConfig("ingest", nil)
	if err != nil || c.Ingest.CountryHeader != "X-Country" || c.Ingest.CountryDB != "/srv/country.mmdb" {
		t.Fatalf("env: %v %q %q", err, c.Ingest.CountryHeader, c.Ingest.CountryDB)
	}
}
