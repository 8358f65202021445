package rollup

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/progress"
	"github.com/viewcount/viewcount/sql/store"
)

// Execer is what the feed, the part checks and the repairs need of a
// store; store.Store satisfies it.
type Execer interface {
	Exec(ctx context.Context, query string, params store.Params) error
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// Inserter is the store as the sink needs it. InsertViews must treat a
// repeated non-empty token as a no-op (ClickHouse's insert deduplication);
// Exec and Query run the feed.
type Inserter interface {
	InsertViews(ctx context.Context, token string, rows []viewcount.Verdict) error
	Execer
}

// Registry is the site registry as a Writer consults it (internal/stream's
// Sites): right before each insert, a valid verdict whose view does not
// belong to its site's current registration is stored as unknown_site
// instead (viewcount.InRegistration). A batch waits up to --flush-every
// for its insert and a held view up to the settle window, so a site can
// be deleted, or deleted and added again, after its views were judged and
// before they are stored; without this check a view judged just before a
// deletion was stored after the deletion had removed the site's rows, and
// counted for whoever registered the domain next. Hold keeps Delete off
// from the check until the rows are in (see Sites.Hold), so the deletion
// of the site's rows that follows a Delete finds them; feeds run under it
// too (runFeedHeld).
type Registry interface {
	viewcount.Registrations
	Hold() (release func())
}

// Config tunes batching.
type Config struct {
	// Sites, when set, is consulted before each insert (see Registry); nil
	// stores verdicts as judged (tools and benchmarks writing their own).
	Sites Registry
	// MaxRows flushes a batch that reaches this many rows; default 50000.
	// Bigger inserts are much cheaper per row for the store (every insert
	// writes new parts that merges rewrite later): BenchmarkInsertBatch;
	// docs/benchmarks/method.md, "Where an insert's cost goes".
	// A batch holds its verdicts in memory, ~20 MB at 50k.
	MaxRows       int
	InsertRetries int           // attempts before the partition is restarted; default 5
	RetryBackoff  time.Duration // first backoff, doubled per attempt; default 200ms
	Feed          FeedConfig
}

func (c *Config) defaults() {
	if c.MaxRows <= 0 {
		c.MaxRows = 50000
	}
	if c.InsertRetries <= 0 {
		c.InsertRetries = 5
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 200 * time.Millisecond
	}
	c.Feed.defaults()
}

// Sink hands out one Writer per partition.
type Sink struct {
	cfg     Config
	store   Inserter
	intents progress.Bucket
	metrics *viewcount.Metrics
	logger  *slog.Logger
	now     func() time.Time
}

// NewSink returns a sink inserting into store and recording intents. now
// is the clock events are stamped with (time.Now in production): the
// validation lag is measured on it.
func NewSink(cfg Config, store Inserter, intents progress.Bucket, metrics *viewcount.Metrics, logger *slog.Logger, now func() time.Time) *Sink {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	return &Sink{cfg: cfg, store: store, intents: intents, metrics: metrics, logger: logger.With("component", "rollup"), now: now}
}

type intent = progress.Record

// Writer batches one partition's verdicts. It is used by a single goroutine:
// the partition's validator.
//
// The intent record is also the partition's progress: intents are written in
// stream order, each only after the previous batch was inserted, so every
// message before the recorded batch is in the store, and a restart resumes
// at the recorded batch's first message (Resume). No stream acknowledgement
// is involved: the stream keeps messages by age, not by consumption.
//
// A full batch is inserted in the background while the next one fills, so
// the partition's validation does not stop for the store: with one
// partition per process (the embedded default) an insert in line cost
// about as much time as judging the batch. At most one batch is in flight,
// and the next intent is recorded only once it is in, which keeps the order
// above. The insert's goroutine belongs to the Writer: Flush, Wait and the
// next batch wait for it, and its error is returned by whichever comes
// first.
type Writer struct {
	s         *Sink
	partition int
	key       string

	rows        []viewcount.Verdict
	first, last uint64
	// open is the batch a previous incarnation recorded but may not have
	// inserted. Until it is rebuilt and inserted, batching follows its range
	// rather than size or time, so the token comes out the same.
	open *intent

	// inflight delivers the outcome of the batch being inserted, nil when
	// none is; spare is the other row buffer, back from the last insert.
	inflight chan inserted
	spare    []viewcount.Verdict

	// failed is the first insert error, returned by every later call. Once
	// a batch failed, no later batch may be recorded: the record is the
	// partition's progress, so recording the next batch would make a
	// restart resume past the failed one and lose it
	// (TestSinkFailedBatchRedone).
	failed error

	recorded                      *intent // the record Open read, for Recorded
	pendingOldest, inflightOldest time.Time
	inserted                      uint64

	feed feedState // the rows stored and not yet in the rollups
}

type inserted struct {
	rows  []viewcount.Verdict // emptied, for reuse
	batch uint64              // the batch's number (its last stream sequence)
	n     int                 // rows inserted
	err   error
}

// Open returns the writer of partition p, reading its recorded batch if any.
func (s *Sink) Open(ctx context.Context, p int) (*Writer, error) {
	w := &Writer{s: s, partition: p, key: progress.Key(p)}
	in, ok, err := progress.Read(ctx, s.intents, p)
	if err != nil {
		return nil, err
	}
	if ok {
		w.open, w.recorded = &in, &in
	}
	return w, nil
}

// Recorded returns the record the Writer was opened on; ok is false when
// the partition had none.
func (w *Writer) Recorded() (pr progress.Record, ok bool) {
	if w.recorded == nil {
		return progress.Record{}, false
	}
	return *w.recorded, true
}

// Oldest returns the receive time of the oldest event handed to the Writer
// and not yet known to be in the rollups (inserted and fed); zero when
// there is none.
func (w *Writer) Oldest() time.Time {
	oldest := time.Time{}
	for _, t := range [...]time.Time{w.pendingOldest, w.inflightOldest, w.feed.oldest()} {
		if !t.IsZero() && (oldest.IsZero() || t.Before(oldest)) {
			oldest = t
		}
	}
	return oldest
}

// Inserted counts the batches this Writer has seen into the store.
func (w *Writer) Inserted() uint64 { return w.inserted }

// Resume is the last stream sequence known to be inserted: the partition's
// consumer starts after it. 0 means from the beginning of the stream.
func (w *Writer) Resume() uint64 {
	if w.open == nil {
		return 0
	}
	return w.open.First - 1
}

// Add appends the verdicts of the stream message seq. Messages must come in
// stream order, starting after Resume. Add may start inserting a batch (and
// wait for the previous one) before returning; an error means a batch may
// not be inserted and the caller must restart the partition from Resume of
// a new Writer: after an insert error every call returns that error.
func (w *Writer) Add(ctx context.Context, seq uint64, verdicts []viewcount.Verdict) error {
	if w.failed != nil {
		return w.failed
	}
	if w.open != nil {
		switch {
		case w.first == 0 && seq > w.open.Last:
			w.open = nil // its messages are gone (retention): nothing to rebuild
		case w.first != 0 && seq > w.open.Last:
			// Part of the recorded range is gone from the stream (retention);
			// insert what is left under the recorded token.
			if err := w.flush(ctx); err != nil {
				return err
			}
		}
	}
	if w.first == 0 {
		w.first = seq
	}
	w.last = seq
	w.rows = append(w.rows, verdicts...)
	for i := range verdicts {
		if t := verdicts[i].Time; w.pendingOldest.IsZero() || t.Before(w.pendingOldest) {
			w.pendingOldest = t
		}
	}
	if w.open != nil {
		if seq >= w.open.Last {
			return w.flush(ctx)
		}
		return nil
	}
	if len(w.rows) >= w.s.cfg.MaxRows {
		return w.flush(ctx)
	}
	return nil
}

// Flush inserts what is pending and waits until every batch started is in
// the store. While a recorded batch is being rebuilt it waits for the rest
// of its range instead of inserting it. Errors are as for Add.
func (w *Writer) Flush(ctx context.Context) error {
	if err := w.FlushAsync(ctx); err != nil {
		return err
	}
	return w.Wait(ctx)
}

// FlushAsync is Flush without waiting for the batch it starts: for the
// periodic flush of a busy partition, which should go on validating.
func (w *Writer) FlushAsync(ctx context.Context) error {
	if w.failed != nil {
		return w.failed
	}
	if w.first == 0 || w.open != nil {
		return nil
	}
	return w.flush(ctx)
}

// Wait blocks until the batch being inserted, if any, is in the store, and
// returns its error (or that of an earlier failed batch). A cancelled ctx
// stops the waiting, not the insert, which ends by itself after its current
// attempt.
func (w *Writer) Wait(ctx context.Context) error {
	if w.failed != nil {
		return w.failed
	}
	if w.inflight == nil {
		return w.maybeFeed(ctx, false)
	}
	select {
	case r := <-w.inflight:
		w.inflight, w.spare = nil, r.rows
		if r.err != nil {
			w.failed = r.err
			return r.err
		}
		w.inserted++
		w.feed.stored(r.batch, r.n, w.inflightOldest, time.Now())
		w.inflightOldest = time.Time{}
		return w.maybeFeed(ctx, false)
	case <-ctx.Done():
		return fmt.Errorf("rollup: partition %d: wait for insert: %w", w.partition, ctx.Err())
	}
}

// Pending reports how many rows wait for the next insert.
func (w *Writer) Pending() int { return len(w.rows) }

func (w *Writer) flush(ctx context.Context) error {
	// The previous batch must be in before this one is recorded.
	if err := w.Wait(ctx); err != nil {
		return err
	}
	in := intent{First: w.first, Last: w.last}
	if w.open != nil {
		in = *w.open
	} else {
		b, _ := json.Marshal(in)
		if _, err := w.s.intents.Put(ctx, w.key, b); err != nil {
			return fmt.Errorf("rollup: partition %d: record batch %d-%d: %w", w.partition, in.First, in.Last, err)
		}
	}
	token := fmt.Sprintf("vc-p%d-%d-%d", w.partition, in.First, in.Last)
	rows := w.rows
	for i := range rows {
		rows[i].Batch = in.Last
	}
	w.rows, w.spare = w.spare[:0], nil
	w.first, w.last, w.open = 0, 0, nil
	w.inflightOldest, w.pendingOldest = w.pendingOldest, time.Time{}
	if len(rows) == 0 {
		w.inflightOldest = time.Time{}
		w.spare = rows
		return nil
	}
	done := make(chan inserted, 1) // never blocks the goroutine, even if nobody waits
	w.inflight = done
	go func() {
		err := w.insert(ctx, token, in, rows)
		if err == nil {
			w.s.metrics.Inserted.Add(uint64(len(rows)))
		}
		n := len(rows)
		clear(rows) // drop string references before reuse
		done <- inserted{rows: rows[:0], batch: in.Last, n: n, err: err}
	}()
	return nil
}

// insert runs on the batch's own goroutine: of the Writer it reads only what
// never changes (the Sink, the partition); the partition's goroutine goes
// on changing the rest.
func (w *Writer) insert(ctx context.Context, token string, in intent, rows []viewcount.Verdict) error {
	backoff := w.s.cfg.RetryBackoff
	for attempt := 1; ; attempt++ {
		err := w.insertChecked(ctx, token, rows)
		if err == nil {
			return nil
		}
		w.s.metrics.InsertErrors.Add(1)
		if attempt >= w.s.cfg.InsertRetries || ctx.Err() != nil {
			return fmt.Errorf("rollup: partition %d: insert batch %d-%d (%d rows, %d attempts): %w",
				w.partition, in.First, in.Last, len(rows), attempt, err)
		}
		w.s.logger.Warn("insert failed; retrying", "partition", w.partition, "batch", token, "attempt", attempt, "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			// Another attempt on a dead context would only fail (and count).
			return fmt.Errorf("rollup: partition %d: insert batch %d-%d (%d rows, %d attempts): %w",
				w.partition, in.First, in.Last, len(rows), attempt, ctx.Err())
		}
		backoff *= 2
	}
}

// insertChecked is one insert attempt: the verdicts are checked against the
// registry (Config.Sites) under its hold, and the hold is released once
// the insert returned. Each attempt checks again: a site may go between
// attempts. A retry then carries other verdicts under the same token, as a
// batch rebuilt after a crash may; the store keeps whichever attempt got
// in first.
func (w *Writer) insertChecked(ctx context.Context, token string, rows []viewcount.Verdict) error {
	reg := w.s.cfg.Sites
	if reg == nil {
		return w.insertTimed(ctx, token, rows)
	}
	release := reg.Hold()
	defer release()
	var moved int
	var site string
	for i := range rows {
		v := &rows[i]
		if v.Reason == viewcount.Valid && !viewcount.InRegistration(reg, v.Site, v.Time) {
			v.Reason = viewcount.UnknownSite
			moved, site = moved+1, v.Site
		}
	}
	if moved > 0 {
		w.s.logger.Info("valid views of a site deleted since they were judged stored as unknown_site",
			"partition", w.partition, "batch", token, "views", moved, "site", site)
	}
	return w.insertTimed(ctx, token, rows)
}

// insertTimed is the store's insert, timed when it succeeds (a failed
// one is counted by InsertErrors instead).
func (w *Writer) insertTimed(ctx context.Context, token string, rows []viewcount.Verdict) error {
	start := time.Now()
	if err := w.s.store.InsertViews(ctx, token, rows); err != nil {
		return err
	}
	w.s.metrics.ObserveInsert(time.Since(start))
	return nil
}
