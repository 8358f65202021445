package app

import (
	"strings"
	"testing"
)

func TestStatsCacheConfig(t *testing.T) {
	t.Setenv("VIEWCOUNT_MEMORY_BUDGET", "1GiB")
	c, err := ParseConfig("serve", nil)
	if err != nil || c.API.StatsCacheMB != 26 {
		t.Errorf("default stats cache = %d MiB, %v; want 26, the budget's share", c.API.StatsCacheMB, err)
	}
	t.Setenv("VIEWCOUNT_MEMORY_BUDGET", "off")
	if c, err := ParseConfig("serve", nil); err != nil || c.API.StatsCacheMB != statsCacheUnbudgeted {
		t.Errorf("stats cache without a budget = %d MiB, %v; want %d", c.API.StatsCacheMB, err, statsCacheUnbudgeted)
	}
	t.Setenv("VIEWCOUNT_STATS_CACHE_MB", "0")
	if c, err := ParseConfig("serve", nil); err != nil || c.API.StatsCacheMB != 0 {
		t.Errorf("env stats cache = %d MiB, %v; want 0 (off)", c.API.StatsCacheMB, err)
	}
	if _, err := ParseConfig("serve", []string{"--stats-cache-mb", "-2"}); err == nil || !strings.Contains(err.Error(), "--stats-cache-mb") {
		t.Errorf("--stats-cache-mb -2: %v, want an error naming the flag", err)
	}
}
