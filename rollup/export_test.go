package rollup

import "context"

// RecordFeed records a feed without running it: what a crash between the
// record and the insert leaves.
func RecordFeed(ctx context.Context, q Execer, p int, first, last uint64) error {
	return recordFeed(ctx, q, feedRange{Partition: p, First: first, Last: last})
}
