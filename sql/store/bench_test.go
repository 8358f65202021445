package store_test

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkInsertBatch inserts 10k-verdict batches into views_raw with all
// four materialized views attached, each batch with its own token, as the
// rollup sink does.
func BenchmarkInsertBatch(b *testing.B) {
	s := migrated(b, openTestStore)
	const batch = 10_000
	// A real batch is a few seconds of traffic.
	f := makeFixtureSpan(batch, 42, time.Now().UTC().Add(-time.Hour), 20*time.Second)
	n := 0
	start := time.Now()
	for b.Loop() {
		n++
		if err := s.InsertViews(b.Context(), fmt.Sprintf("bench:%d", n), f.rows); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*batch)/time.Since(start).Seconds(), "rows/s")
}
