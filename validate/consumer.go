package validate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup"
)

// Sink receives verdicts; rollup.Sink implements it. A Writer must be used by
// one goroutine and acknowledges the stream messages once their verdicts are
// durable.
type Sink interface {
	Open(ctx context.Context, partition int) (*rollup.Writer, error)
}

// Options are the consumer's knobs; the rules have their own Config.
type Options struct {
	Partitions []int         // partitions this process owns; nil means all
	FetchBatch int           // messages per pull; default 256
	FlushEvery time.Duration // longest a verdict waits for its insert; default 500ms
	// ReplayMargin is added to the longest rule window when rebuilding state,
	// covering the gap between an event's receive time and its stream time.
	ReplayMargin time.Duration // default 1m
}

// Validator runs one pull consumer per owned partition, judges every event
// and hands the verdicts to the sink.
type Validator struct {
	cfg     Config
	opts    Options
	js      jetstream.JetStream
	parts   int
	sites   SiteLookup
	sink    Sink
	metrics *viewcount.Metrics
	logger  *slog.Logger
}

// New returns a validator over the stream reached through js, which has
// partitions partitions.
func New(cfg Config, opts Options, js jetstream.JetStream, partitions int, sites SiteLookup, sink Sink, metrics *viewcount.Metrics, logger *slog.Logger) (*Validator, error) {
	if _, err := NewRules(cfg, sites); err != nil {
		return nil, err
	}
	if opts.FetchBatch <= 0 {
		opts.FetchBatch = 256
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = 500 * time.Millisecond
	}
	if opts.ReplayMargin <= 0 {
		opts.ReplayMargin = time.Minute
	}
	if opts.Partitions == nil {
		for p := 0; p < partitions; p++ {
			opts.Partitions = append(opts.Partitions, p)
		}
	}
	for _, p := range opts.Partitions {
		if p < 0 || p >= partitions {
			return nil, fmt.Errorf("validate: partition %d outside 0-%d", p, partitions-1)
		}
	}
	return &Validator{cfg: cfg, opts: opts, js: js, parts: partitions, sites: sites, sink: sink,
		metrics: metrics, logger: logger.With("component", "validate")}, nil
}

// Run validates until ctx is cancelled. A partition that fails (store down
// past its retries, a lost ack) is restarted from the stream with its state
// rebuilt, so a failure changes no verdict.
func (v *Validator) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, p := range v.opts.Partitions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			backoff := time.Second
			for ctx.Err() == nil {
				err := v.runPartition(ctx, p)
				if ctx.Err() != nil {
					return
				}
				v.logger.Error("partition stopped; restarting", "partition", p, "err", err, "in", backoff)
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
				}
				backoff = min(2*backoff, 30*time.Second)
			}
		}()
	}
	wg.Wait()
	return nil
}

// Durable is the consumer name of a partition.
func Durable(p int) string { return "validate-p" + strconv.Itoa(p) }

func (v *Validator) runPartition(ctx context.Context, p int) error {
	cons, err := v.js.CreateOrUpdateConsumer(ctx, viewcount.StreamName, jetstream.ConsumerConfig{
		Durable:       Durable(p),
		Description:   "validator of partition " + strconv.Itoa(p),
		FilterSubject: viewcount.Subject(p),
		DeliverPolicy: jetstream.DeliverAllPolicy,
		// AckAll: acknowledging a batch's last message acknowledges the
		// batch, so the ack floor moves in whole batches and a restart
		// resumes exactly at the first unacknowledged batch.
		AckPolicy:     jetstream.AckAllPolicy,
		AckWait:       5 * time.Minute,
		MaxAckPending: 100000,
		MaxDeliver:    -1,
	})
	if err != nil {
		return fmt.Errorf("validate: partition %d: consumer: %w", p, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("validate: partition %d: consumer info: %w", p, err)
	}
	rules, err := NewRules(v.cfg, v.sites)
	if err != nil {
		return err
	}
	floor := info.AckFloor.Stream
	if err := v.replay(ctx, p, floor, rules); err != nil {
		return err
	}
	w, err := v.sink.Open(ctx, p)
	if err != nil {
		return err
	}
	// The final flush outlives ctx so verdicts already judged are inserted on
	// a clean shutdown rather than redone on the next start.
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := w.Flush(fctx); err != nil {
			v.logger.Warn("final flush failed; the batch will be redelivered", "partition", p, "err", err)
		}
	}()

	last := floor
	var evs []viewcount.Event
	var firstPending time.Time
	for ctx.Err() == nil {
		batch, err := cons.Fetch(v.opts.FetchBatch, jetstream.FetchMaxWait(v.opts.FlushEvery))
		if err != nil {
			return fmt.Errorf("validate: partition %d: fetch: %w", p, err)
		}
		for msg := range batch.Messages() {
			md, err := msg.Metadata()
			if err != nil {
				return fmt.Errorf("validate: partition %d: metadata: %w", p, err)
			}
			seq := md.Sequence.Stream
			if seq <= last {
				// A redelivery of a message this run already judged: its
				// verdicts are in the open batch or inserted already.
				continue
			}
			last = seq
			evs, err = viewcount.DecodeEvents(evs[:0], msg.Data())
			if err != nil {
				// Ingest wrote it, so this is a bug or tampering: keep going,
				// loudly, rather than wedge the partition.
				v.logger.Error("undecodable message skipped", "partition", p, "seq", seq, "err", err)
				evs = evs[:0]
			}
			verdicts := make([]viewcount.Verdict, len(evs))
			for i := range evs {
				r := rules.Judge(&evs[i])
				v.metrics.Validated(r)
				verdicts[i] = viewcount.Verdict{Event: evs[i], Reason: r, Partition: uint16(p), Seq: seq, Index: uint32(i)}
			}
			if w.Pending() == 0 {
				firstPending = time.Now()
			}
			if err := w.Add(ctx, seq, verdicts, msg); err != nil {
				return err
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("validate: partition %d: fetch: %w", p, err)
		}
		if w.Pending() > 0 && time.Since(firstPending) >= v.opts.FlushEvery {
			if err := w.Flush(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// replay rebuilds rules' state by judging, without emitting, the events of
// partition p from a window before floor up to floor. Verdicts depend only on
// events within the rules' windows, so the rebuilt state gives the same
// verdicts an uninterrupted run would have given.
func (v *Validator) replay(ctx context.Context, p int, floor uint64, rules *Rules) error {
	if floor == 0 {
		return nil
	}
	s, err := v.js.Stream(ctx, viewcount.StreamName)
	if err != nil {
		return fmt.Errorf("validate: partition %d: replay: %w", p, err)
	}
	window := rules.ReplayWindow() + v.opts.ReplayMargin
	start := time.Now().Add(-window)
	if m, err := s.GetMsg(ctx, floor); err == nil {
		start = m.Time.Add(-window)
	}
	oc, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{viewcount.Subject(p)},
		DeliverPolicy:  jetstream.DeliverByStartTimePolicy,
		OptStartTime:   &start,
	})
	if err != nil {
		return fmt.Errorf("validate: partition %d: replay consumer: %w", p, err)
	}
	began, lastLog := time.Now(), time.Now()
	var evs []viewcount.Event
	var n int
	for ctx.Err() == nil {
		batch, err := oc.Fetch(1024, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return fmt.Errorf("validate: partition %d: replay fetch: %w", p, err)
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			md, err := msg.Metadata()
			if err != nil {
				return fmt.Errorf("validate: partition %d: replay metadata: %w", p, err)
			}
			if md.Sequence.Stream > floor {
				v.logReplay(p, n, began)
				return nil
			}
			evs, err = viewcount.DecodeEvents(evs[:0], msg.Data())
			if err == nil {
				for i := range evs {
					rules.Judge(&evs[i])
				}
				n += len(evs)
			}
			if md.Sequence.Stream == floor || md.NumPending == 0 {
				v.logReplay(p, n, began)
				return nil
			}
		}
		if got == 0 {
			// Nothing left to read below the floor (retention removed it).
			v.logReplay(p, n, began)
			return nil
		}
		if time.Since(lastLog) > 5*time.Second {
			lastLog = time.Now()
			v.logger.Info("replaying stream to rebuild state", "partition", p, "events", n, "upto_seq", floor)
		}
	}
	return ctx.Err()
}

func (v *Validator) logReplay(p, n int, began time.Time) {
	if n > 0 {
		v.logger.Info("state rebuilt from stream", "partition", p, "events", n, "took", time.Since(began).Round(time.Millisecond))
	}
}
