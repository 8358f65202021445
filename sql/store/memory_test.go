package store

import (
	"context"
	"os"
	"strconv"
	"testing"
)

// TestEngineMemory: Config.Memory (and mergeNice) reaches the embedded engine as its
// server settings. The engine reads them once, when the process's first
// store boots it, so the check runs in a child process of its own (this
// test binary, re-run for TestEngineMemoryChild).
func TestEngineMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("boots chDB in a child process")
	}
	runChild(t, "TestEngineMemoryChild", "VIEWCOUNT_TEST_ENGINE_MEMORY")
}

func TestEngineMemoryChild(t *testing.T) {
	dir := os.Getenv("VIEWCOUNT_TEST_ENGINE_MEMORY")
	if dir == "" {
		t.Skip("run by TestEngineMemory")
	}
	ctx := context.Background()
	mem := Memory{Limit: 300 << 20, MarkCache: 8 << 20, Caches: 4 << 20}
	s, err := Open(ctx, Config{DataDir: dir, Memory: mem}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string]int64{"max_server_memory_usage": mem.Limit, "mark_cache_size": mem.MarkCache}
	for _, name := range otherCaches {
		want[name] = mem.Caches
	}
	want["os_threads_nice_value_merge_mutate"] = mergeNice
	r, err := s.Query(ctx, "SELECT name, value FROM system.server_settings WHERE name IN {names:Array(String)}",
		Params{"names": ArrayParam(keys(want))})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for r.Next() {
		name, value := r.String("name"), r.String("value")
		if v, err := strconv.ParseInt(value, 10, 64); err != nil || v != want[name] {
			t.Errorf("%s = %s, want %d", name, value, want[name])
		}
		seen++
	}
	if seen != len(want) {
		t.Errorf("%d of the %d settings found", seen, len(want))
	}
}

func keys(m map[string]int64) []string {
	var k []string
	for name := range m {
		k = append(k, name)
	}
	return k
}
