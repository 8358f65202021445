package app

import (
	"strings"
	"testing"
)

func TestStatsCacheConfig(t *testing.T) {
	c, err := ParseConfig("serve", nil)
	if err != nil || c.API.StatsCacheMB != 64 {
		t.Errorf("default stats cache = %d MiB, %v; want 64", c.API.StatsCacheMB, err)
	}
	t.Setenv("VIEWCOUNT_STATS_CACHE_MB", "0")
	if c, err := ParseConfig("serve", nil); err != nil || c.API.StatsCacheMB != 0 {
		t.Errorf("env stats cache = %d MiB, %v; want 0 (off)", c.API.StatsCacheMB, err)
	}
	if _, err := ParseConfig("serve", []string{"--stats-cache-mb", "-1"}); err == nil || !strings.Contains(err.Error(), "--stats-cache-mb") {
		t.Errorf("--stats-cache-mb -1: %v, want an error naming the flag", err)
	}
}
