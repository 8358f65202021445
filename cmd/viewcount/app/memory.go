package app

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/membudget"
)

// engineMemoryEvery is how often the embedded engine's tracked memory is
// read for /metrics: a query, so not on every scrape.
const engineMemoryEvery = 5 * time.Second

// applyMemoryBudget sets Go's memory limit to the budget's share, unless
// GOMEMLIMIT says otherwise (the operator's word wins), and registers the
// budget's parts for /metrics. The engine, the validators and the stats
// cache got their sizes from the configuration (Config.applyBudget).
func (m *Main) applyMemoryBudget() {
	p := m.cfg.Memory
	if p.Budget == 0 {
		return
	}
	goLimit := p.Go
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(p.Go)
	} else {
		goLimit = debug.SetMemoryLimit(-1)
	}
	m.logger.Info("memory budget", "budget", membudget.Format(p.Budget), "code", membudget.Format(p.Code),
		"go", membudget.Format(goLimit), "engine", membudget.Format(p.Engine), "validator", membudget.Format(p.Validator),
		"stats_cache", membudget.Format(int64(m.cfg.API.StatsCacheMB)<<20), "window_keys", p.WindowKeys, "max_held", p.MaxHeld,
		"max_visits", p.MaxVisits, "max_open_views", p.MaxOpenViews)
	parts := []viewcount.MemoryPart{
		{Name: "total", Budget: p.Budget, Used: func() int64 { rss, _ := viewcount.ResidentBytes(); return int64(rss) }},
		{Name: "code", Budget: p.Code, Used: func() int64 { return membudget.ProcSize("/proc/self/status", "RssFile") }},
		{Name: "go", Budget: goLimit, Used: goMemory},
		{Name: "validator", Budget: p.Validator, Used: m.Metrics.ValidatorBytes},
		{Name: "stats_cache", Budget: int64(m.cfg.API.StatsCacheMB) << 20},
	}
	if p.Engine > 0 {
		parts = append(parts, viewcount.MemoryPart{Name: "engine", Budget: p.Engine, Used: m.engineMemory.Load})
	}
	m.Metrics.SetMemoryParts(parts)
}

// sampleEngineMemory keeps m.engineMemory at the embedded engine's tracked
// memory (MemoryTracking: what max_server_memory_usage is held against)
// until ctx ends.
func (m *Main) sampleEngineMemory(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		qctx, cancel := context.WithTimeout(ctx, every)
		r, err := m.store.Query(qctx, "SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'", nil)
		cancel()
		if err == nil && r.Next() {
			m.engineMemory.Store(r.Int64("value"))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// goMemory is what Go's memory limit is held against: everything the
// runtime mapped, less the heap it returned to the system.
func goMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
