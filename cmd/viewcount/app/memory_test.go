package app

import (
	"strings"
	"testing"

	"github.com/viewcount/viewcount/internal/membudget"
)

// TestMemoryBudgetConfig: --memory-budget sizes the engine (embedded
// only), the validators' tables and an analyst query's memory; a flag set
// by hand wins; a budget too small or unreadable is an error naming the
// flag; off leaves every part at its unbudgeted default.
func TestMemoryBudgetConfig(t *testing.T) {
	c, err := ParseConfig("serve", []string{"--memory-budget", "1GiB"})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Memory
	if p.Budget != membudget.GiB || p.Engine == 0 || c.Store.Memory.Limit != p.Engine || c.Store.Memory.MarkCache != p.MarkCache {
		t.Errorf("1GiB: plan %+v, store memory %+v", p, c.Store.Memory)
	}
	if b := c.Validate.Budget; b.WindowKeys != p.WindowKeys || b.MaxHeld != p.MaxHeld || b.MaxVisits != p.MaxVisits || b.MaxOpenViews != p.MaxOpenViews || b.WindowKeys == 0 {
		t.Errorf("1GiB: validator budget %+v, plan %+v", b, p)
	}
	if c.SQL.MaxMemoryMB != int(p.Engine/2>>20) {
		t.Errorf("1GiB: analyst query memory %d MiB, want half the engine's %d MiB", c.SQL.MaxMemoryMB, p.Engine>>20)
	}

	if c, err := ParseConfig("serve", []string{"--memory-budget", "2GiB", "--sql-max-memory-mb", "300", "--stats-cache-mb", "7"}); err != nil || c.SQL.MaxMemoryMB != 300 || c.API.StatsCacheMB != 7 {
		t.Errorf("flags beside a budget: sql %d MiB, stats cache %d MiB, %v; want 300 and 7", c.SQL.MaxMemoryMB, c.API.StatsCacheMB, err)
	}

	c, err = ParseConfig("serve", []string{"--memory-budget", "off"})
	if err != nil || c.Memory.Budget != 0 || c.Store.Memory.Limit != 0 || c.Validate.Budget.WindowKeys != 0 {
		t.Errorf("off: plan %+v, store %+v, validator %+v, %v; want all zero", c.Memory, c.Store.Memory, c.Validate.Budget, err)
	}

	c, err = ParseConfig("ingest", []string{"--memory-budget", "1GiB"})
	if err != nil || c.Memory.Engine != 0 || c.Memory.Go != membudget.GiB-membudget.Code {
		t.Errorf("ingest: plan %+v, %v; want no engine share: it opens no store", c.Memory, err)
	}

	t.Setenv("CLICKHOUSE_DSN", "clickhouse://127.0.0.1:9000/viewcount")
	c, err = ParseConfig("serve", []string{"--memory-budget", "1GiB"})
	if err != nil || c.Memory.Engine != 0 || c.Store.Memory.Limit != 0 || c.Memory.Go != membudget.GiB-membudget.Code {
		t.Errorf("ClickHouse server: plan %+v, %v; want no engine share, Go the whole data share", c.Memory, err)
	}

	for _, bad := range []string{"100MiB", "1GB", "lots", "-1GiB"} {
		if _, err := ParseConfig("serve", []string{"--memory-budget", bad}); err == nil || !strings.Contains(err.Error(), "--memory-budget") {
			t.Errorf("--memory-budget %s: %v, want an error naming the flag", bad, err)
		}
	}
}
