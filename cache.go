package viewcount

import (
	"os"
	"path/filepath"
)

// CacheDir is the directory under which `make` keeps what it fetches
// (libchdb.so, the country database, the user-agent data sets) and
// benchmarks keep generated histories: $XDG_CACHE_HOME/viewcount/<parts…>,
// with ~/.cache when XDG_CACHE_HOME is unset, as the Makefile spells it.
// Empty if no cache directory is known (no XDG_CACHE_HOME and no home).
func CacheDir(parts ...string) string {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(append([]string{dir, "viewcount"}, parts...)...)
}
