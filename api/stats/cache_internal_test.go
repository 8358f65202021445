package stats

import (
	"testing"
	"time"
)

func TestAnswerCacheEviction(t *testing.T) {
	now := time.Date(2026, 4, 2, 10, 0, 0, 0, time.UTC)
	ans := func(n int) *answer { return &answer{encoded: make([]byte, n)} } // size n+64
	c := newAnswerCache(1000, 10*time.Second)
	for _, k := range []string{"a", "b", "c", "d"} {
		c.put(k, ans(180), true, now) // 245 bytes with its key: all four fit
	}
	if _, ok := c.get("a", now); !ok { // a is now the most recently used
		t.Fatal("a missing")
	}
	c.put("e", ans(180), false, now) // 1225 bytes: b, the least recently used, goes
	if _, ok := c.get("b", now); ok {
		t.Error("b kept past the budget")
	}
	for _, k := range []string{"a", "c", "d", "e"} {
		if _, ok := c.get(k, now); !ok {
			t.Errorf("%s evicted, want b only", k)
		}
	}
	if c.size != 4*245 || len(c.byKey) != 4 || c.order.Len() != 4 {
		t.Errorf("size %d, %d keys, %d listed; want 980, 4, 4", c.size, len(c.byKey), c.order.Len())
	}
	// e is not settled: gone after the TTL; the others stay.
	later := now.Add(10 * time.Second)
	if _, ok := c.get("e", later); ok {
		t.Error("e served after its TTL")
	}
	if _, ok := c.get("a", later); !ok {
		t.Error("settled a expired")
	}
	if c.size != 3*245 {
		t.Errorf("size %d after expiry, want 735", c.size)
	}
	// More than a quarter of the budget is not kept.
	c.put("f", ans(200), true, now)
	if _, ok := c.get("f", now); ok {
		t.Error("an answer over a quarter of the budget was kept")
	}
}
