package rollup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

// Inserter is the store as the sink needs it. InsertViews must treat a
// repeated non-empty token as a no-op (ClickHouse's insert deduplication).
type Inserter interface {
	InsertViews(ctx context.Context, token string, rows []viewcount.Verdict) error
}

// Intents is where open batches are recorded: the VC_ROLLUP bucket.
type Intents interface {
	Get(ctx context.Context, key string) (jetstream.KeyValueEntry, error)
	Put(ctx context.Context, key string, value []byte) (uint64, error)
}

// Config tunes batching.
type Config struct {
	// MaxRows flushes a batch that reaches this many rows; default 50000.
	// Bigger inserts are much cheaper per row for the store (every insert
	// writes new parts that merges rewrite later): embedded, 5k-row batches
	// cost ~10 µs of CPU per row, 20k ~5 µs, 50k ~3.6 µs (BENCHMARKS.md).
	// A batch holds its verdicts in memory, ~20 MB at 50k.
	MaxRows       int
	InsertRetries int           // attempts before the partition is restarted; default 5
	RetryBackoff  time.Duration // first backoff, doubled per attempt; default 200ms
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
}

// Sink hands out one Writer per partition.
type Sink struct {
	cfg     Config
	store   Inserter
	intents Intents
	metrics *viewcount.Metrics
	logger  *slog.Logger
	now     func() time.Time
}

// NewSink returns a sink inserting into store and recording intents.
func NewSink(cfg Config, store Inserter, intents Intents, metrics *viewcount.Metrics, logger *slog.Logger, now func() time.Time) *Sink {
	cfg.defaults()
	return &Sink{cfg: cfg, store: store, intents: intents, metrics: metrics, logger: logger.With("component", "rollup"), now: now}
}

type intent struct {
	First uint64 `json:"first"`
	Last  uint64 `json:"last"`
}

// Writer batches one partition's verdicts. It is used by a single goroutine:
// the partition's validator.
//
// The intent record is also the partition's progress: intents are written in
// stream order, each only after the previous batch was inserted, so every
// message before the recorded batch is in the store, and a restart resumes
// at the recorded batch's first message (Resume). No stream acknowledgement
// is involved: the stream keeps messages by age, not by consumption.
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
}

// Open returns the writer of partition p, reading its recorded batch if any.
func (s *Sink) Open(ctx context.Context, p int) (*Writer, error) {
	w := &Writer{s: s, partition: p, key: "p" + strconv.Itoa(p)}
	e, err := s.intents.Get(ctx, w.key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
	case err != nil:
		return nil, fmt.Errorf("rollup: partition %d: read intent: %w", p, err)
	default:
		var in intent
		if err := json.Unmarshal(e.Value(), &in); err != nil {
			return nil, fmt.Errorf("rollup: partition %d: decode intent: %w", p, err)
		}
		w.open = &in
	}
	return w, nil
}

// Resume is the last stream sequence known to be inserted: the partition's
// consumer starts after it. 0 means from the beginning of the stream.
func (w *Writer) Resume() uint64 {
	if w.open == nil {
		return 0
	}
	return w.open.First - 1
}

// Add appends the verdicts of the stream message seq. Messages must come in
// stream order, starting after Resume. Add may insert a batch before
// returning; an error means the batch may not be inserted and the caller
// must restart the partition from Resume of a new Writer.
func (w *Writer) Add(ctx context.Context, seq uint64, verdicts []viewcount.Verdict) error {
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

// Flush inserts what is pending. While a recorded batch is being rebuilt it
// waits for the rest of its range instead.
func (w *Writer) Flush(ctx context.Context) error {
	if w.first == 0 || w.open != nil {
		return nil
	}
	return w.flush(ctx)
}

// Pending reports how many rows wait for the next insert.
func (w *Writer) Pending() int { return len(w.rows) }

func (w *Writer) flush(ctx context.Context) error {
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
	if len(w.rows) > 0 {
		if err := w.insert(ctx, token, in); err != nil {
			return err
		}
	}
	w.s.metrics.Inserted.Add(uint64(len(w.rows)))
	clear(w.rows) // drop string references before reuse
	w.rows = w.rows[:0]
	w.first, w.last, w.open = 0, 0, nil
	return nil
}

func (w *Writer) insert(ctx context.Context, token string, in intent) error {
	backoff := w.s.cfg.RetryBackoff
	var err error
	for attempt := 1; ; attempt++ {
		err = w.s.store.InsertViews(ctx, token, w.rows)
		if err == nil {
			break
		}
		w.s.metrics.InsertErrors.Add(1)
		if attempt >= w.s.cfg.InsertRetries || ctx.Err() != nil {
			return fmt.Errorf("rollup: partition %d: insert batch %d-%d (%d rows, %d attempts): %w",
				w.partition, in.First, in.Last, len(w.rows), attempt, err)
		}
		w.s.logger.Warn("insert failed; retrying", "partition", w.partition, "batch", token, "attempt", attempt, "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			// Another attempt on a dead context would only fail (and count).
			return fmt.Errorf("rollup: partition %d: insert batch %d-%d (%d rows, %d attempts): %w",
				w.partition, in.First, in.Last, len(w.rows), attempt, ctx.Err())
		}
		backoff *= 2
	}
	oldest := w.rows[0].Time
	for i := range w.rows {
		if w.rows[i].Time.Before(oldest) {
			oldest = w.rows[i].Time
		}
	}
	w.s.metrics.SetPipelineLag(w.s.now().Sub(oldest).Milliseconds())
	return nil
}
