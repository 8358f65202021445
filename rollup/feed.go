package rollup

import (
	"context"
	"fmt"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"strconv"
	"strings"
	"time"
)

// The feed moves stored rows into the rollups (migration 012): the
// materialized views read views_feed, a Null table, and a feed copies one
// partition's rows of a range of batches from views_raw into it. A Writer
// feeds its partition in the background every FeedEvery or FeedRows rows,
// so the views run on large blocks a few times a minute instead of on
// every insert (BenchmarkInsertFed; docs/benchmarks/README.md, "Store and
// rollups"); CatchUp feeds whatever is
// left when no validator runs.
//
// A feed is exactly-once the way a batch insert is: its range is recorded
// (rollup_feed) before it runs, its token is derived from the range, and a
// feed redone after a crash is dropped by the rollups' deduplication. The
// next range starts after the recorded one, so ranges never overlap.

// FeedConfig tunes the feed.
type FeedConfig struct {
	// Rows feeds a partition once this many rows are stored and not fed;
	// default 200000. A feed costs a fixed ~110 ms of CPU whatever its
	// rows (BenchmarkInsertParts), so fewer, larger feeds cost less per row.
	Rows int
	// Every feeds a partition's stored rows at least this often; default
	// 3s. It adds to the public counts' lag: shorter means fresher counts
	// and more feeds.
	Every time.Duration
}

func (c *FeedConfig) defaults() {
	if c.Rows <= 0 {
		c.Rows = 200_000
	}
	if c.Every <= 0 {
		c.Every = 3 * time.Second
	}
}

// feedRange is one feed: partition's batches First..Last (batch numbers
// are the last stream sequence of each insert, Verdict.Batch). Since is
// the receive time of its oldest row, zero when unknown.
type feedRange struct {
	Partition   int
	First, Last uint64
	Since       time.Time
}

func (r feedRange) token() string {
	return fmt.Sprintf("vc-feed-p%d-%d-%d", r.Partition, r.First, r.Last)
}

func (r feedRange) params() store.Params {
	since := int64(0)
	if !r.Since.IsZero() {
		since = r.Since.UnixMilli()
	}
	return store.Params{"partition": strconv.Itoa(r.Partition), "first": strconv.FormatUint(r.First, 10),
		"last": strconv.FormatUint(r.Last, 10), "since": strconv.FormatInt(since, 10), "token": r.token()}
}

// recordFeed writes r as its partition's latest feed: from then on a
// restart redoes r rather than choosing another range.
func recordFeed(ctx context.Context, q Execer, r feedRange) error {
	if err := q.Exec(ctx, queries.Text(queries.FeedRecord), r.params()); err != nil {
		return fmt.Errorf("rollup: partition %d: record feed %d-%d: %w", r.Partition, r.First, r.Last, err)
	}
	return nil
}

// Feed records and runs one feed: partition's rows stored by batches
// first..last (no row of them received before since; zero when unknown)
// into the rollups. The range must start right after the partition's
// latest feed (FeedProgress) and its batches must be stored: what a Writer
// does on its own, for benchmarks and tools that write views_raw
// themselves.
func Feed(ctx context.Context, q Execer, partition int, first, last uint64, since time.Time) error {
	r := feedRange{Partition: partition, First: first, Last: last, Since: since}
	if err := recordFeed(ctx, q, r); err != nil {
		return err
	}
	return runFeed(ctx, q, r)
}

// runFeed copies r into views_feed; rerunning a recorded r adds nothing.
func runFeed(ctx context.Context, q Execer, r feedRange) error {
	if err := q.Exec(ctx, queries.Text(queries.Feed), r.params()); err != nil {
		return fmt.Errorf("rollup: partition %d: feed batches %d-%d: %w", r.Partition, r.First, r.Last, err)
	}
	return nil
}

// FeedProgress returns each partition's latest recorded feed: every row
// the partition stored by batches up to its Last is in the rollups, or
// is in that feed, which may not have run.
func FeedProgress(ctx context.Context, q Execer) (map[int]feedRange, error) {
	res, err := q.Query(ctx, queries.Text(queries.FeedProgress), nil)
	if err != nil {
		return nil, fmt.Errorf("rollup: read feed progress: %w", err)
	}
	out := make(map[int]feedRange, res.Len())
	for res.Next() {
		p, first, last := res.Int("partition"), res.Uint64("argMax(first, last)"), res.Uint64("max(last)")
		since := res.Int64("toUnixTimestamp64Milli(argMax(since, last))")
		if err := res.Err(); err != nil {
			return nil, fmt.Errorf("rollup: feed progress: %w", err)
		}
		r := feedRange{Partition: p, First: first, Last: last}
		if since > 0 {
			r.Since = time.UnixMilli(since).UTC()
		}
		out[p] = r
	}
	return out, nil
}

// FedThrough returns, per partition, the highest stream sequence a feed
// has reached: no row of a higher sequence is in the rollups, nor in a
// feed yet (a row is stored by a batch at or after its own sequence, and
// fed by that batch). Read after a count, it tells whether the count can
// include an event at a given stream position (the public counts' own
// views). A partition never fed is absent: nothing of it is counted.
func FedThrough(ctx context.Context, q Execer) (map[int]uint64, error) {
	fed, err := FeedProgress(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make(map[int]uint64, len(fed))
	for p, r := range fed {
		out[p] = r.Last
	}
	return out, nil
}

// CatchUp feeds every stored row no feed has taken yet, partition by
// partition, after redoing each partition's latest feed (which a crash may
// have cut short). It is for when no validator runs: repairs and tools
// before they read the rollups, tests after inserting directly. It reads
// two columns of all of views_raw; rows reports what was fed.
func CatchUp(ctx context.Context, q Execer) (rows uint64, err error) {
	fed, err := FeedProgress(ctx, q)
	if err != nil {
		return 0, err
	}
	for _, r := range fed {
		if err := runFeed(ctx, q, r); err != nil {
			return 0, err
		}
	}
	waiting, err := backlog(ctx, q, fed)
	if err != nil {
		return 0, err
	}
	for _, b := range waiting {
		if err := Feed(ctx, q, b.partition, fed[b.partition].Last+1, b.last, time.Time{}); err != nil {
			return rows, err
		}
		rows += b.rows
	}
	return rows, nil
}

// Unfed counts the rows stored and not yet fed to the rollups: what a
// running validator feeds within --feed-every, or a stopped one at its
// next start. The latest recorded feed counts as fed.
func Unfed(ctx context.Context, q Execer) (uint64, error) {
	fed, err := FeedProgress(ctx, q)
	if err != nil {
		return 0, err
	}
	waiting, err := backlog(ctx, q, fed)
	var n uint64
	for _, b := range waiting {
		n += b.rows
	}
	return n, err
}

type waiting struct {
	partition int
	last      uint64 // the partition's newest stored batch
	rows      uint64 // stored by batches after its latest feed
}

// backlog lists the partitions with rows no feed has taken.
func backlog(ctx context.Context, q Execer, fed map[int]feedRange) ([]waiting, error) {
	res, err := q.Query(ctx, queries.Text(queries.FeedBacklog), store.Params{"fed": fedMap(fed)})
	if err != nil {
		return nil, fmt.Errorf("rollup: read the feed's backlog: %w", err)
	}
	var out []waiting
	for res.Next() {
		p, last, n := res.Int("partition"), res.Uint64("last"), res.Uint64("rows")
		if n > 0 {
			out = append(out, waiting{partition: p, last: last, rows: n})
		}
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("rollup: feed backlog: %w", err)
	}
	return out, nil
}

// fedMap is a Map(UInt16, UInt64) parameter of each partition's last fed
// batch: a partition missing from it reads 0.
func fedMap(fed map[int]feedRange) string {
	var b strings.Builder
	b.WriteByte('{')
	for p, r := range fed {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d:%d", p, r.Last)
	}
	b.WriteByte('}')
	return b.String()
}
