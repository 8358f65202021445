package rollup

import (
	"context"
	"fmt"
	"time"

	"github.com/viewcount/viewcount/internal/feed"
)

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

// feedState is a Writer's view of its partition's feed: what was fed, what
// is stored and not yet fed, and the feed in flight. Only the partition's
// goroutine touches it; the feed's own goroutine reports through done.
type feedState struct {
	opened bool   // openFeed ran
	fed    uint64 // the last batch fed (recorded and run)
	// unbounded: the next feed may take a batch this Writer did not store
	// (the recorded one of a previous incarnation, when its messages are
	// gone from the stream and it is not redone), whose receive times it
	// does not know: that feed reads without a time bound.
	unbounded bool

	// The batches stored since the last feed started: up to last, rows of
	// them, the oldest receive time among them and when the first of them
	// was stored; and each one's oldest receive time, for the validation
	// lag its feed observes.
	last        uint64
	rows        int
	since, from time.Time
	oldests     []time.Time

	inflight *feed.Range // the feed running, nil when none
	done     chan error
}

// stored notes batch, inserted with n rows whose oldest was received at
// oldest.
func (f *feedState) stored(batch uint64, n int, oldest, now time.Time) {
	if batch <= f.fed {
		return // a redone batch some feed already took
	}
	if f.rows == 0 {
		f.from = now
	}
	f.last = max(f.last, batch)
	f.rows += n
	if n > 0 && (f.since.IsZero() || oldest.Before(f.since)) {
		f.since = oldest
	}
	if n > 0 && !oldest.IsZero() {
		f.oldests = append(f.oldests, oldest)
	}
}

// oldest is the receive time of the oldest row stored and not yet fed
// (or being fed); zero when there is none.
func (f *feedState) oldest() time.Time {
	o := f.since
	if f.inflight != nil && !f.inflight.Since.IsZero() && (o.IsZero() || f.inflight.Since.Before(o)) {
		o = f.inflight.Since
	}
	return o
}

// openFeed reads the partition's feed progress, before the Writer's first
// insert (from maybeFeed, so a store that is down fails like an insert).
// The latest recorded feed may have been cut short by a crash: it is
// redone (adding nothing if it was not). Batches a previous incarnation inserted and did not feed lie
// between it and the validator's progress, which says every batch before
// its recorded one is stored: they are fed now, before anything new.
func (w *Writer) openFeed(ctx context.Context) error {
	if w.feed.opened {
		return nil
	}
	all, err := feed.Progress(ctx, w.s.store)
	if err != nil {
		return err
	}
	if r, ok := all[w.partition]; ok {
		if err := w.runFeedHeld(ctx, r); err != nil {
			return err
		}
		w.feed.fed = r.Last
	}
	// The record Open read, not w.open: Add drops that once the recorded
	// batch's messages turn out gone, which may be before this runs.
	rec := w.recorded
	w.feed.unbounded = rec != nil
	if rec == nil || rec.First <= w.feed.fed+1 {
		w.feed.opened = true
		return nil
	}
	// No receive time bounds these rows: the read goes by the batch index.
	r := feed.Range{Partition: w.partition, First: w.feed.fed + 1, Last: rec.First - 1}
	if err := feed.Record(ctx, w.s.store, r); err != nil {
		return err
	}
	if err := w.runFeedHeld(ctx, r); err != nil {
		return err
	}
	w.feed.fed, w.feed.opened = r.Last, true
	return nil
}

// maybeFeed collects a finished feed and starts the next one when enough
// rows wait or the oldest has waited long enough (force: whenever any
// wait). A failed feed fails the Writer like a failed insert: the
// partition restarts and openFeed redoes it.
func (w *Writer) maybeFeed(ctx context.Context, force bool) error {
	f := &w.feed
	if err := w.openFeed(ctx); err != nil {
		w.failed = err
		return err
	}
	if f.inflight != nil {
		if !force {
			select {
			case err := <-f.done:
				if err := w.fedOne(err); err != nil {
					return err
				}
			default:
				return nil
			}
		} else if err := w.waitFeed(ctx); err != nil {
			return err
		}
	}
	if f.rows == 0 {
		return nil
	}
	if !force && f.rows < w.s.cfg.Feed.Rows && time.Since(f.from) < w.s.cfg.Feed.Every {
		return nil
	}
	r := feed.Range{Partition: w.partition, First: f.fed + 1, Last: f.last, Since: f.since}
	if f.unbounded {
		r.Since, f.unbounded = time.Time{}, false
	}
	fd := fed{rows: f.rows, stored: f.from, oldests: f.oldests}
	f.inflight, f.rows, f.since, f.oldests = &r, 0, time.Time{}, nil
	if f.done == nil {
		f.done = make(chan error, 1) // never blocks the goroutine, even if nobody waits
	}
	go func() { f.done <- w.runFeed(ctx, r, fd) }()
	return nil
}

// fed is what a feed carries besides its range: its rows, when the first
// of its batches was stored, and each batch's oldest receive time. The
// feed's goroutine owns it.
type fed struct {
	rows    int
	stored  time.Time
	oldests []time.Time
}

// waitFeed blocks until the feed in flight, if any, is done.
func (w *Writer) waitFeed(ctx context.Context) error {
	if w.feed.inflight == nil {
		return nil
	}
	select {
	case err := <-w.feed.done:
		return w.fedOne(err)
	case <-ctx.Done():
		return fmt.Errorf("rollup: partition %d: wait for feed: %w", w.partition, ctx.Err())
	}
}

func (w *Writer) fedOne(err error) error {
	r := w.feed.inflight
	w.feed.inflight = nil
	if err != nil {
		w.failed = err
		return err
	}
	w.feed.fed = r.Last
	return nil
}

// Drain inserts what is pending and feeds everything stored: for a clean
// shutdown, so the next start has nothing to redo. Errors are as for Add.
func (w *Writer) Drain(ctx context.Context) error {
	if err := w.Flush(ctx); err != nil {
		return err
	}
	if err := w.maybeFeed(ctx, true); err != nil {
		return err
	}
	return w.waitFeed(ctx)
}

// runFeed runs on the feed's own goroutine: it records r, then copies it,
// retrying as inserts do. Of the Writer it reads only what never changes.
// ctx is the partition's, cancelled when its lease is lost, so a feed that
// has not started by then never starts; one already running in the store
// finishes, as an insert does, while the new owner may record a range that
// overlaps it. The lease outlives a stalled owner by its TTL, so that
// takes a feed running for longer than that.

func (w *Writer) runFeed(ctx context.Context, r feed.Range, fd fed) error {
	backoff := w.s.cfg.RetryBackoff
	recorded := false
	for attempt := 1; ; attempt++ {
		err := error(nil)
		if !recorded {
			if err = feed.Record(ctx, w.s.store, r); err == nil {
				recorded = true
			}
		}
		if err == nil {
			err = w.runFeedHeld(ctx, r)
		}
		if err == nil {
			break
		}
		w.s.metrics.FeedErrors.Add(1)
		if attempt >= w.s.cfg.InsertRetries || ctx.Err() != nil {
			return fmt.Errorf("%w (%d attempts)", err, attempt)
		}
		w.s.logger.Warn("feed failed; retrying", "partition", w.partition, "feed", r.Token(), "attempt", attempt, "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return fmt.Errorf("%w (%d attempts)", err, attempt)
		}
		backoff *= 2
	}
	w.s.metrics.Fed.Add(uint64(fd.rows))
	// The rollups hold the range now: how long its rows waited in
	// views_raw, and how old each batch's oldest event is as it is
	// counted. Event times are receive times on the injected clock.
	w.s.metrics.ObserveFeedLag(time.Since(fd.stored))
	now := w.s.now()
	for _, t := range fd.oldests {
		w.s.metrics.ObserveValidationLag(now.Sub(t))
	}
	return nil
}

// runFeedHeld runs one feed under the registry's hold (Config.Sites): a
// feed copies rows it read from views_raw into the rollups, so a site's
// deletion, having deleted the site's views_raw rows, waits for the feeds
// in flight (Sites.Quiesce) before it deletes its rollup rows; a feed that
// read the site's rows before they went would otherwise put them back.
func (w *Writer) runFeedHeld(ctx context.Context, r feed.Range) error {
	if reg := w.s.cfg.Sites; reg != nil {
		defer reg.Hold()()
	}
	start := time.Now()
	if err := feed.Copy(ctx, w.s.store, r); err != nil {
		return err
	}
	w.s.metrics.ObserveFeed(time.Since(start))
	return nil
}
