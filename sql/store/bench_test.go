package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkInsertBatch inserts batches into views_raw, each batch with its
// own token, as the rollup sink does: rows per second of the embedded
// store's insert path as a validator waits for it (encoding, parsing, the
// views_raw part). Since migration 012 the rollups are fed from views_raw
// apart from the inserts; BenchmarkInsertFed measures both together.
//
// The rows look like load-test traffic: 80 % valid, random visitors, pages
// spread over 100k with a Zipf popularity ("spread") or all on one page
// ("hot", the viral post); batch sizes are what a partition's writer sends
// at 5k, 20k and 50k views/s with the default one-second flush (50k is the
// default batch cap).
func BenchmarkInsertBatch(b *testing.B) {
	for _, pages := range []struct {
		name string
		n    uint64
	}{{"spread", 100_000}, {"hot", 1}} {
		for _, batch := range []int{5_000, 20_000, 50_000, 100_000} {
			b.Run(fmt.Sprintf("%s/batch=%d", pages.name, batch), func(b *testing.B) {
				fedLoop(b, migrated(b, openTestStore), storetest.LoadRows(batch, pages.n, time.Now().UTC().Add(-time.Hour)), 0)
			})
		}
	}
}
