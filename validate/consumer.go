package validate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/membudget"
	"github.com/viewcount/viewcount/internal/progress"
	vcstream "github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/validate/judge"
)

// Sink opens the Writer of each partition the validator runs; rollup.Sink
// is one, wired in by cmd/viewcount through SinkOf. An error fails the
// partition, which is restarted.
type Sink interface {
	Open(ctx context.Context, partition int) (Writer, error)
}

// Writer stores one partition's verdicts in stream order and says where
// the partition resumes; *rollup.Writer implements it. It is used by one
// goroutine. Once a batch failed, Add, Flush, FlushAsync and Drain return
// that error, and the partition restarts from Resume of a new Writer.
type Writer interface {
	// Resume is the last stream sequence known to be stored: the
	// partition's consumer starts after it (0: from the beginning).
	Resume() uint64
	// Recorded is the progress record the Writer was opened on; ok is
	// false when the partition had none.
	Recorded() (pr progress.Record, ok bool)
	// Add appends the verdicts of stream message seq; it may insert a
	// batch before it returns.
	Add(ctx context.Context, seq uint64, verdicts []viewcount.Verdict) error
	// Pending counts the verdicts waiting for the next insert.
	Pending() int
	// FlushAsync starts inserting what is pending; Flush also waits until
	// every batch started is stored.
	FlushAsync(ctx context.Context) error
	Flush(ctx context.Context) error
	// Drain inserts what is pending and feeds everything stored to the
	// rollups: a clean shutdown's last call.
	Drain(ctx context.Context) error
	// Oldest is the receive time of the oldest verdict handed over and
	// not yet in the rollups; zero when there is none.
	Oldest() time.Time
	// Inserted counts the batches stored by this Writer.
	Inserted() uint64
}

// SinkOf is the Sink whose Open is open, a sink's Open returning its own
// writer type (rollup.Sink's returns *rollup.Writer, which a Sink cannot
// return as it is).
func SinkOf[W Writer](open func(ctx context.Context, partition int) (W, error)) Sink {
	return sinkOf[W](open)
}

type sinkOf[W Writer] func(ctx context.Context, partition int) (W, error)

func (o sinkOf[W]) Open(ctx context.Context, partition int) (Writer, error) {
	w, err := o(ctx, partition)
	if err != nil {
		return nil, err // not a nil W in a non-nil Writer
	}
	return w, nil
}

// Options are the consumer's knobs; the rules have their own judge.Config.
type Options struct {
	Partitions []int         // partitions this process owns; nil means all
	FetchBatch int           // messages per pull; default 256
	FlushEvery time.Duration // longest a verdict waits for its insert; default 1s
	// ReplayMargin is added to the longest rule window when rebuilding state,
	// covering the gap between an event's receive time and its stream time.
	ReplayMargin time.Duration // default 1m
	// Owner names this process in partition leases; default host:pid:start
	// (the start time tells a restarted process from its predecessor).
	Owner string
	// Now is the clock that dates ticks and measures the lag; default time.Now.
	Now func() time.Time
	// MaxLag bounds the age of the oldest event not yet inserted before
	// health part "lag" fails, and how long a partition with events waiting
	// may go without progress before its part fails; default 2m.
	MaxLag time.Duration
	// Raw is views_raw, checked against each partition's progress record at
	// its start (ErrCorruptProgress); nil skips that check.
	Raw RawStore
	// HeldEvery is how often a quiet partition with held verdicts due
	// publishes a tick to release them; default 1s. Each tick is a stream
	// message every restart replays, so a second keeps them few while a
	// due view waits at most a second beyond a settle window of minutes.
	HeldEvery time.Duration
	// LeaseRenew is how often a partition's lease is renewed, which is also
	// how soon the partition is given up to a revalidation's pause; default
	// vcstream.LeaseTTL/3. Shorter than LeaseTTL/3, it only renews more
	// often: the lease still expires LeaseTTL after its last renewal.
	LeaseRenew time.Duration
	// Budget is what the process's tables may hold (zero fields: the
	// built-in process budgets).
	Budget Budget
}

// Validator runs one pull consumer per owned partition, judges every event
// and hands the verdicts to the sink.
type Validator struct {
	cfg     judge.Config
	opts    Options
	js      jetstream.JetStream
	sites   judge.SiteLookup
	sink    Sink
	metrics *viewcount.Metrics
	logger  *slog.Logger
	rules   judge.RuleSet // recorded on every verdict

	partsMu sync.Mutex
	parts   map[int]*partProgress // while Run runs
}

// HeldSince is the receive time of the oldest valid view this validator
// holds for settling, per site that has any, as its partitions last
// reported them (once a second).
func (v *Validator) HeldSince() map[string]time.Time {
	out := map[string]time.Time{}
	v.partsMu.Lock()
	defer v.partsMu.Unlock()
	for _, pp := range v.parts {
		pp.mu.Lock()
		for site, t := range pp.heldSince {
			if o, ok := out[site]; !ok || t.Before(o) {
				out[site] = t
			}
		}
		pp.mu.Unlock()
	}
	return out
}

// Held counts the valid views this validator holds for settling, by site
// and page (and site under page ""), as its partitions last reported them
// (once a second).
func (v *Validator) Held() map[viewcount.PendingKey]uint64 {
	out := map[viewcount.PendingKey]uint64{}
	v.partsMu.Lock()
	defer v.partsMu.Unlock()
	for _, pp := range v.parts {
		pp.mu.Lock()
		for k, n := range pp.held {
			out[k] += n
		}
		pp.mu.Unlock()
	}
	return out
}

// New returns a validator over the stream reached through js, which has
// partitions partitions. Zero fields of cfg take their defaults, except
// that a zero capacity (MaxKeys, MaxHeld, MaxOpenViews, MaxVisits) is
// opts.Budget's split evenly among the partitions this validator owns.
func New(cfg judge.Config, opts Options, js jetstream.JetStream, partitions int, sites judge.SiteLookup, sink Sink, metrics *viewcount.Metrics, logger *slog.Logger) (*Validator, error) {
	if opts.FetchBatch <= 0 {
		opts.FetchBatch = 256
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = time.Second
	}
	if opts.ReplayMargin <= 0 {
		opts.ReplayMargin = time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxLag <= 0 {
		opts.MaxLag = 2 * time.Minute
	}
	if opts.HeldEvery <= 0 {
		opts.HeldEvery = time.Second
	}
	if opts.LeaseRenew <= 0 || opts.LeaseRenew > vcstream.LeaseTTL/3 {
		opts.LeaseRenew = vcstream.LeaseTTL / 3
	}
	if opts.Owner == "" {
		host, _ := os.Hostname()
		opts.Owner = host + ":" + strconv.Itoa(os.Getpid()) + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
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
	cfg = opts.Budget.perPartition(cfg, len(opts.Partitions))
	cfg, err := cfg.WithDefaults() // the consumer reads MaxHeld from it
	if err != nil {
		return nil, err
	}
	if _, err := judge.NewRules(cfg, sites); err != nil {
		return nil, err
	}
	return &Validator{cfg: cfg, opts: opts, js: js, sites: sites, sink: sink,
		metrics: metrics, logger: logger.With("component", "validate"), rules: cfg.RuleSet()}, nil
}

// Run validates until ctx is cancelled. A partition that fails (store down
// past its retries, a lost ack) is restarted from the stream with its state
// rebuilt, so a failure changes no verdict. Each partition's state is health
// part "partition/<p>" while Run runs, failing from a stop until the
// partition makes progress again.
func (v *Validator) Run(ctx context.Context) error {
	if _, rs, err := v.currentRules(ctx); err == nil {
		v.rules.Version = rs // with the corrections in force now, before any partition runs
	}
	v.registerRules(ctx)
	parts := make(map[int]*partProgress, len(v.opts.Partitions))
	for _, p := range v.opts.Partitions {
		parts[p] = &partProgress{}
	}
	v.partsMu.Lock()
	v.parts = parts
	v.partsMu.Unlock()
	var wg sync.WaitGroup
	wctx, stopWatch := context.WithCancel(ctx)
	wg.Add(1)
	go func() {
		defer wg.Done()
		v.watchHealth(wctx, parts)
	}()
	var pwg sync.WaitGroup
	for _, p := range v.opts.Partitions {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			v.keepPartition(ctx, p, parts[p])
		}()
	}
	pwg.Wait()
	stopWatch()
	wg.Wait()
	return nil
}

// runPartition validates partition p from where its sink left off. One
// ordered consumer reads the partition in stream order from a rule window
// before that point: events up to it only rebuild the rules' state, events
// after it are judged and written. An ordered consumer needs no
// acknowledgements (the stream keeps messages by age) and delivers each
// message once, in order, so verdicts depend on nothing but the stream.
func (v *Validator) runPartition(ctx context.Context, p int, pp *partProgress) (err error) {
	leases, err := v.js.KeyValue(ctx, viewcount.BucketLeases)
	if err != nil {
		return fmt.Errorf("validate: partition %d: leases: %w", p, err)
	}
	l, err := acquireLease(ctx, leases, p, v.opts.Owner, vcstream.LeaseTTL, v.logger)
	if err != nil {
		return err
	}
	l.renew = v.opts.LeaseRenew
	ctx, cancel := context.WithCancelCause(ctx)
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		if err := l.keep(ctx); err != nil {
			cancel(err)
		}
	}()
	defer func() {
		cancel(nil)
		<-kept
		cause := context.Cause(ctx)
		if errors.Is(cause, ErrLeaseLost) {
			err = cause
			return // the partition is someone else's now: leave its lease alone
		}
		if errors.Is(cause, ErrPaused) && err == nil {
			err = cause
		}
		l.release()
	}()
	return v.validate(ctx, p, pp)
}

func (v *Validator) validate(ctx context.Context, p int, pp *partProgress) error {
	rcfg, version, err := v.currentRules(ctx)
	if err != nil {
		return fmt.Errorf("validate: partition %d: %w", p, err)
	}
	rules, err := judge.NewRules(rcfg, v.sites)
	if err != nil {
		return err
	}
	w, err := v.sink.Open(ctx, p)
	if err != nil {
		return err
	}
	resume := w.Resume()
	s, err := v.js.Stream(ctx, viewcount.StreamName)
	if err != nil {
		return fmt.Errorf("validate: partition %d: %w", p, err)
	}
	if err := v.checkStart(ctx, p, w, s); err != nil {
		return err
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{viewcount.Subject(p)}}
	if resume > 0 {
		// Replay from one rule window before the resume point; the stream's
		// own timestamps are receive times to within milliseconds.
		base := time.Now() // the resume message is gone (retention): replay what is left
		if m, err := s.GetMsg(ctx, resume); err == nil {
			base = m.Time
		}
		start := rules.ReplayStart(base).Add(-v.opts.ReplayMargin)
		cfg.DeliverPolicy = jetstream.DeliverByStartTimePolicy
		cfg.OptStartTime = &start
	}
	cons, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("validate: partition %d: consumer: %w", p, err)
	}
	// Messages, not Fetch: an ordered consumer recreates itself on every
	// Fetch, and this loop would fetch many times a second.
	it, err := cons.Messages(jetstream.PullMaxMessages(v.opts.FetchBatch))
	if err != nil {
		return fmt.Errorf("validate: partition %d: consumer: %w", p, err)
	}
	rd := newReader(it) // see reader for why Next runs on its own goroutine
	defer rd.stop()
	// The final flush outlives ctx so verdicts already judged are inserted on
	// a clean shutdown rather than redone on the next start; never after the
	// lease is lost, when the partition may already be someone else's.
	defer func() {
		if errors.Is(context.Cause(ctx), ErrLeaseLost) {
			return
		}
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := w.Drain(fctx); err != nil {
			v.logger.Warn("final flush failed; the batch or feed is redone on the next start", "partition", p, "err", err)
		}
	}()

	pl := partitionLoop{v: v, p: p, pp: pp, rules: rules, version: version, w: w, resume: resume,
		q:  holdQueue{window: rules.SettleWindow().Milliseconds(), max: v.cfg.MaxHeld},
		rp: replayProgress{p: p, resume: resume, began: time.Now(), lastLog: time.Now()}}
	defer v.metrics.DropPartition(p)
	// An incarnation that stops between reports (a store failing at once)
	// still leaves what it was holding for the lag part.
	defer func() { pl.progressed(time.Now()) }()
	for ctx.Err() == nil {
		pl.report()
		msg, err := rd.next(ctx, v.opts.FlushEvery)
		switch {
		case err == nil:
			if err := pl.message(ctx, msg); err != nil {
				return err
			}
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
			if err := pl.idle(ctx); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("validate: partition %d: next: %w", p, err)
		}
		if pl.w.Pending() > 0 && time.Since(pl.firstPending) >= v.opts.FlushEvery {
			if err := pl.w.FlushAsync(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// partitionLoop is the state of one partition's validation loop.
type partitionLoop struct {
	v       *Validator
	p       int
	pp      *partProgress
	rules   *judge.Rules
	version string // the rule set's, recorded on each verdict
	w       Writer
	resume  uint64
	q       holdQueue
	rp      replayProgress

	// seq is the last message's stream sequence; streamPending says more
	// messages of the partition were waiting behind it; moved says a
	// message was handled since the last report.
	seq           uint64
	streamPending bool
	moved         bool

	evs          []viewcount.Event
	out          []viewcount.Verdict
	firstPending time.Time
	lastTick     time.Time
	lastReport   time.Time
}

// message judges one stream message and writes what is due: its verdicts
// (less those held) and held verdicts whose settle window has passed.
// Messages up to resume only rebuild state.
func (l *partitionLoop) message(ctx context.Context, msg jetstream.Msg) error {
	md, err := msg.Metadata()
	if err != nil {
		return fmt.Errorf("validate: partition %d: metadata: %w", l.p, err)
	}
	seq := md.Sequence.Stream
	l.seq, l.streamPending, l.moved = seq, md.NumPending > 0, true
	l.evs = l.evs[:0]
	if t, ok := tickTime(msg); ok {
		l.q.observe(t)
	} else if l.evs, err = viewcount.DecodeEvents(l.evs, msg.Data()); err != nil {
		// Ingest wrote it, so this is a bug or tampering: keep going,
		// loudly, rather than wedge the partition.
		l.v.logger.Error("undecodable message skipped", "partition", l.p, "seq", seq, "err", err)
		l.evs = l.evs[:0]
	}
	replay := seq <= l.resume
	// Only the state is rebuilt in a replay: dimensions would be thrown away.
	l.out = judgeEvents(l.rules, &l.q, l.version, l.p, seq, l.evs, !replay, nil, l.out[:0])
	if replay {
		l.rp.add(l.v.logger, len(l.evs), seq) // written before the restart
		return nil
	}
	for i := range l.out {
		// A verdict held during the replay is released after it without
		// dimensions (Device is never "" once they are set).
		if l.out[i].Dims.Device == "" {
			l.out[i].Dims = l.rules.Dims(&l.out[i].Event)
		}
	}
	l.rp.done(l.v.logger)
	for i := range l.out {
		l.v.metrics.Validated(l.out[i].Reason)
	}
	if l.w.Pending() == 0 {
		l.firstPending = time.Now()
	}
	return l.w.Add(ctx, seq, l.out)
}

// judgeEvents judges the events of one message (seq) of partition p in
// order and appends to out what is due: their verdicts, less the valid
// views of watched traffic (held in q), and the held verdicts whose settle
// window has passed. The validator and a revalidation share it, so both
// reach the same verdicts from the same stream. dims says whether to
// derive the verdicts' dimensions. before, if not nil, sees each final
// verdict before the visit stage does: a revalidation gives the views
// outside its range their stored verdicts there.
func judgeEvents(rules *judge.Rules, q *holdQueue, version string, p int, seq uint64, evs []viewcount.Event, dims bool, before func(*viewcount.Verdict), out []viewcount.Verdict) []viewcount.Verdict {
	start := len(out)
	for i := range evs {
		e := &evs[i]
		q.observe(e.Time.UnixMilli())
		vd := viewcount.Verdict{Event: *e, Partition: uint16(p), Seq: seq, Index: uint32(i), Rules: version}
		if e.Kind == viewcount.KindEngagement {
			// Never judged as a view: the visit stage judges it against
			// its view, after the view when that is held.
			if q.holds(e) {
				q.push(vd)
			} else {
				out = append(out, vd)
			}
			continue
		}
		if dims {
			vd.Reason, vd.Dims = rules.JudgeDims(e)
		} else {
			vd.Reason = rules.Judge(e)
		}
		if vd.Reason == viewcount.Valid && rules.Watched(e) {
			q.push(vd)
			continue
		}
		out = append(out, vd)
	}
	out = q.release(out, rules.Settle)
	for i := start; i < len(out); i++ {
		if before != nil {
			before(&out[i])
		}
		rules.Visit(&out[i])
	}
	return out
}

// report publishes the partition's state to the metrics, and its progress
// to the health watch, once a second at most: neither is free enough for
// every message, and health bounds are minutes.
func (l *partitionLoop) report() {
	if time.Since(l.lastReport) < time.Second {
		return
	}
	l.lastReport = time.Now()
	l.progressed(l.lastReport)
	l.pp.setHeld(l.q.bySite(), l.q.sinceBySite())
	st := l.rules.Stats()
	held := l.q.held()
	l.v.metrics.SetPartitionState(l.p, viewcount.PartitionState{RetryKeys: st.IDs, ViewKeys: st.Views,
		RotationNetworks: st.RotationNetworks, RotationUntracked: st.RotationUntracked, Held: held,
		Bytes: st.Bytes + int64(held)*membudget.HeldBytes})
}

// progressed tells the health watch what the messages since the last call
// left: what waits, whether a batch went in.
func (l *partitionLoop) progressed(now time.Time) {
	if l.moved {
		l.moved = false
		l.pp.advanced(now, l.streamPending, l.w.Oldest(), l.w.Inserted() > 0, l.seq <= l.resume)
	}
}

// idle runs when the partition is quiet: flush what waits (and see the
// batch in flight through, so its error surfaces now rather than with the
// next traffic), and tick if held verdicts are due, so they are released
// without waiting for traffic.
func (l *partitionLoop) idle(ctx context.Context) error {
	if err := l.w.Flush(ctx); err != nil {
		return err
	}
	if !l.streamPending {
		l.pp.caughtUp(time.Now(), l.w.Oldest())
	}
	if now := l.v.opts.Now(); l.q.due(now) && time.Since(l.lastTick) >= l.v.opts.HeldEvery {
		l.lastTick = time.Now()
		tick := &nats.Msg{Subject: viewcount.Subject(l.p), Header: nats.Header{TickHeader: {strconv.FormatInt(now.UnixMilli(), 10)}}}
		if _, err := l.v.js.PublishMsg(ctx, tick); err != nil && ctx.Err() == nil {
			l.v.logger.Warn("tick not published; held verdicts wait for the next event", "partition", l.p, "err", err)
		}
	}
	return nil
}

// replayProgress reports a state rebuild: a line every few seconds while it
// runs (a day of stream can take a while) and one when it is done.
type replayProgress struct {
	p              int
	resume         uint64
	events         int
	began, lastLog time.Time
	finished       bool
}

func (r *replayProgress) add(logger *slog.Logger, n int, seq uint64) {
	r.events += n
	if time.Since(r.lastLog) > 5*time.Second {
		r.lastLog = time.Now()
		logger.Info("replaying stream to rebuild state", "partition", r.p, "events", r.events, "seq", seq, "resume_after", r.resume)
	}
}

func (r *replayProgress) done(logger *slog.Logger) {
	if r.finished {
		return
	}
	r.finished = true
	if r.events > 0 {
		logger.Info("state rebuilt from stream", "partition", r.p, "events", r.events, "took", time.Since(r.began).Round(time.Millisecond))
	}
}
