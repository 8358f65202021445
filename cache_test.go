package viewcount

import "testing"

func TestCacheDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/c")
	if got := CacheDir("geo", "v1", "x.mmdb"); got != "/c/viewcount/geo/v1/x.mmdb" {
		t.Errorf("with XDG_CACHE_HOME: %q", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := CacheDir("chdb"); got != "/home/u/.cache/viewcount/chdb" {
		t.Errorf("without XDG_CACHE_HOME: %q", got)
	}
	t.Setenv("HOME", "")
	if got := CacheDir("chdb"); got != "" {
		t.Errorf("without a home: %q, want empty", got)
	}
}
