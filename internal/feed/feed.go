// Package feed moves stored rows into the rollups and says how far it got
// (migration 012): the materialized views read views_feed, a Null table,
// and a feed copies one partition's rows of a range of batches from
// views_raw into it. A rollup.Writer feeds its partition in the background
// every FeedEvery or FeedRows rows, so the views run on large blocks a few
// times a minute instead of on every insert (BenchmarkInsertFed;
// docs/benchmarks/README.md, "Store and rollups"); CatchUp feeds whatever
// is left when no validator runs. What is stored and not yet fed
// (UnfedViews, Unfed) and how far the feeds reached (FedThrough) are read
// by every role that reports a count's lag.
//
// A feed is exactly-once the way a batch insert is: its range is recorded
// (rollup_feed) before it runs, its token is derived from the range, and a
// feed redone after a crash is dropped by the rollups' deduplication. The
// next range starts after the recorded one, so ranges never overlap.
//
// It belongs to no role: it never reads the stream, and writes nothing but
// rollup_feed and views_feed.
package feed

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// Execer is the store as the feed needs it; store.Store satisfies it.
type Execer interface {
	Exec(ctx context.Context, query string, params store.Params) error
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// Range is one feed: partition's batches First..Last (batch numbers
// are the last stream sequence of each insert, Verdict.Batch). Since is
// the receive time of its oldest row, zero when unknown.
type Range struct {
	Partition   int
	First, Last uint64
	Since       time.Time
}

func (r Range) Token() string {
	return fmt.Sprintf("vc-feed-p%d-%d-%d", r.Partition, r.First, r.Last)
}

func (r Range) params() store.Params {
	since := int64(0)
	if !r.Since.IsZero() {
		since = r.Since.UnixMilli()
	}
	return store.Params{"partition": strconv.Itoa(r.Partition), "first": strconv.FormatUint(r.First, 10),
		"last": strconv.FormatUint(r.Last, 10), "since": strconv.FormatInt(since, 10), "token": r.Token()}
}

// Record writes r as its partition's latest feed: from then on a
// restart redoes r rather than choosing another range.
func Record(ctx context.Context, q Execer, r Range) error {
	if err := q.Exec(ctx, queries.Text(queries.FeedRecord), r.params()); err != nil {
		return fmt.Errorf("feed: partition %d: record feed %d-%d: %w", r.Partition, r.First, r.Last, err)
	}
	return nil
}

// Run records and runs one feed: partition's rows stored by batches
// first..last (no row of them received before since; zero when unknown)
// into the rollups. The range must start right after the partition's
// latest feed (Progress) and its batches must be stored: what a Writer
// does on its own, for benchmarks and tools that write views_raw
// themselves.
func Run(ctx context.Context, q Execer, partition int, first, last uint64, since time.Time) error {
	r := Range{Partition: partition, First: first, Last: last, Since: since}
	if err := Record(ctx, q, r); err != nil {
		return err
	}
	return Copy(ctx, q, r)
}

// Copy copies r into views_feed, then records it as done: from then on
// the rollups hold it (FedThrough's Done). Rerunning a recorded r adds
// nothing.
func Copy(ctx context.Context, q Execer, r Range) error {
	if err := q.Exec(ctx, queries.Text(queries.Feed), r.params()); err != nil {
		return fmt.Errorf("feed: partition %d: feed batches %d-%d: %w", r.Partition, r.First, r.Last, err)
	}
	if err := q.Exec(ctx, queries.Text(queries.FeedDone), r.params()); err != nil {
		return fmt.Errorf("feed: partition %d: record feed %d-%d done: %w", r.Partition, r.First, r.Last, err)
	}
	return nil
}

// Progress returns each partition's latest recorded feed: every row
// the partition stored by batches up to its Last is in the rollups, or
// is in that feed, which may not have run.
func Progress(ctx context.Context, q Execer) (map[int]Range, error) {
	fed, _, err := progress(ctx, q)
	return fed, err
}

// progress is Progress, and per partition the last batch of the latest
// feed known to be done (0: none).
func progress(ctx context.Context, q Execer) (map[int]Range, map[int]uint64, error) {
	res, err := q.Query(ctx, queries.Text(queries.FeedProgress), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("feed: read feed progress: %w", err)
	}
	out := make(map[int]Range, res.Len())
	done := make(map[int]uint64, res.Len())
	for res.Next() {
		p, first, last := res.Int("partition"), res.Uint64("argMax(first, last)"), res.Uint64("max(last)")
		since := res.Int64("toUnixTimestamp64Milli(argMax(since, last))")
		completed := res.Uint64("completed")
		if err := res.Err(); err != nil {
			return nil, nil, fmt.Errorf("feed: feed progress: %w", err)
		}
		r := Range{Partition: p, First: first, Last: last}
		if since > 0 {
			r.Since = time.UnixMilli(since).UTC()
		}
		out[p] = r
		done[p] = completed
	}
	return out, done, nil
}

// Fed is how far a partition's feeds reached, by stream sequence (a row
// is stored by a batch at or after its own sequence, and fed by that
// batch). No row of a sequence above Through is in the rollups, nor in a
// feed yet: Through is recorded before a feed runs. Every row stored by
// a batch up to Done is in the rollups: Done is recorded once the feed
// has run. Between them is the feed running now, if any.
type Fed struct {
	Through, Done uint64
}

// FedThrough returns each partition's Fed. Read after a count, Through
// tells whether the count can include an event at a given stream
// position; read before it, Done whether it must (the public counts'
// own views). A partition never fed is absent: nothing of it is counted.
func FedThrough(ctx context.Context, q Execer) (map[int]Fed, error) {
	fed, done, err := progress(ctx, q)
	if err != nil {
		return nil, err
	}
	out := make(map[int]Fed, len(fed))
	for p, r := range fed {
		out[p] = Fed{Through: r.Last, Done: min(done[p], r.Last)}
	}
	return out, nil
}

// CatchUp feeds every stored row no feed has taken yet, partition by
// partition, after redoing each partition's latest feed (which a crash may
// have cut short). It is for when no validator runs: repairs and tools
// before they read the rollups, tests after inserting directly. It reads
// two columns of all of views_raw; rows reports what was fed.
func CatchUp(ctx context.Context, q Execer) (rows uint64, err error) {
	fed, err := Progress(ctx, q)
	if err != nil {
		return 0, err
	}
	for _, r := range fed {
		if err := Copy(ctx, q, r); err != nil {
			return 0, err
		}
	}
	waiting, err := backlog(ctx, q, fed)
	if err != nil {
		return 0, err
	}
	for _, b := range waiting {
		if err := Run(ctx, q, b.partition, fed[b.partition].Last+1, b.last, time.Time{}); err != nil {
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
	fed, err := Progress(ctx, q)
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
func backlog(ctx context.Context, q Execer, fed map[int]Range) ([]waiting, error) {
	res, err := q.Query(ctx, queries.Text(queries.FeedBacklog), store.Params{"fed": FedMap(fed)})
	if err != nil {
		return nil, fmt.Errorf("feed: read the feed's backlog: %w", err)
	}
	var out []waiting
	for res.Next() {
		p, last, n := res.Int("partition"), res.Uint64("last"), res.Uint64("rows")
		if n > 0 {
			out = append(out, waiting{partition: p, last: last, rows: n})
		}
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("feed: feed backlog: %w", err)
	}
	return out, nil
}

// FedMap is a Map(UInt16, UInt64) parameter of each partition's last fed
// batch: a partition missing from it reads 0.
func FedMap(fed map[int]Range) string {
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
