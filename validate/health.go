package validate

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/viewcount/viewcount"
)

// keepPartition runs partition p, restarting it with backoff until ctx
// ends. A stop that repeats the last one is logged at error level once
// every few minutes, not on every attempt.
func (v *Validator) keepPartition(ctx context.Context, p int, pp *partProgress) {
	const maxBackoff, relog = 30 * time.Second, 5 * time.Minute
	backoff := time.Second
	var lastErr string
	var lastLog time.Time
	for ctx.Err() == nil {
		err := v.runPartition(ctx, p, pp)
		pp.setHeld(nil, nil) // what it held is redone by the next incarnation, or another validator
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("validate: partition stopped without an error")
		}
		if errors.Is(err, ErrPaused) {
			// Not a fault: a revalidation holds the partition and hands it
			// back; acquiring the lease again waits for that.
			pp.handedOver()
			v.logger.Info("partition given up to a revalidation", "partition", p)
			backoff = time.Second
			continue
		}
		if errors.Is(err, ErrLeaseLost) {
			// Another validator owns the partition now and answers for it;
			// this one only waits for the lease.
			pp.handedOver()
		} else if pp.stopped(err) {
			backoff = time.Second // it worked for a while: a new fault
		}
		if errors.Is(err, ErrCorruptProgress) {
			backoff = maxBackoff // only an operator's repair helps
		}
		if msg := err.Error(); msg != lastErr || time.Since(lastLog) >= relog {
			lastErr, lastLog = msg, time.Now()
			v.logger.Error("partition stopped; restarting", "partition", p, "err", err, "in", backoff)
		} else {
			v.logger.Debug("partition stopped again", "partition", p, "err", err, "in", backoff)
		}
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// partProgress is what a partition's loop tells the health watch, which
// runs on another goroutine. It outlives the partition's incarnations, so a
// stop's reason and the age of what waits are kept across restarts until
// the partition makes progress again.
type partProgress struct {
	mu       sync.Mutex
	stopErr  error     // why the last incarnation stopped; nil once one progresses
	progress time.Time // last message judged, batch inserted or catch-up
	busy     bool      // events wait: in the stream for the consumer, or in the writer
	oldest   time.Time // receive time of the oldest event not known inserted; zero none
	// held counts the valid views the partition holds for settling, by
	// site and page (and site), for the public counts' pending; heldSince
	// is the receive time of each site's oldest.
	held      map[viewcount.PendingKey]uint64
	heldSince map[string]time.Time
}

// setHeld replaces the partition's held counts and oldest times.
func (pp *partProgress) setHeld(h map[viewcount.PendingKey]uint64, since map[string]time.Time) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.held, pp.heldSince = h, since
}

// stopped records why an incarnation ended, and reports whether it had made
// progress (cleared the previous stop) before it did.
func (pp *partProgress) stopped(err error) (progressed bool) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	progressed = pp.stopErr == nil
	pp.stopErr = err
	return progressed
}

// handedOver records that the partition is another validator's.
func (pp *partProgress) handedOver() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.stopErr, pp.busy, pp.oldest = nil, false, time.Time{}
}

// advanced records that the loop went on: a message judged (pending more
// behind it in the stream), with the writer's state after it. inserted says
// a batch reached the store in this incarnation, which is what clears a
// previous stop; replaying says the message only rebuilt state, so the
// writer's empty state says nothing about what waits.
func (pp *partProgress) advanced(now time.Time, pendingInStream bool, oldest time.Time, inserted, replaying bool) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.progress = now
	pp.busy = pendingInStream || !oldest.IsZero()
	if !replaying {
		pp.oldest = oldest
	}
	if inserted {
		pp.stopErr = nil
	}
}

// caughtUp records that everything read is inserted and, as far as the
// last message said, nothing waits in the stream; unfed is the receive
// time of the oldest inserted row not yet fed to the rollups (the
// Writer's Oldest then; zero for none).
func (pp *partProgress) caughtUp(now, unfed time.Time) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.progress, pp.busy, pp.oldest, pp.stopErr = now, false, unfed, nil
}

// health returns the partition's problem (nil when healthy), the oldest
// event it has read and not counted yet (not inserted, or not fed), and
// the oldest it holds for settling; zero times for none.
func (pp *partProgress) health(now time.Time, stallAfter time.Duration) (oldest, held time.Time, problem error) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	for _, t := range pp.heldSince {
		if held.IsZero() || t.Before(held) {
			held = t
		}
	}
	switch {
	case pp.stopErr != nil:
		return pp.oldest, held, fmt.Errorf("stopped, restarting: %w", pp.stopErr)
	case pp.busy && !pp.progress.IsZero() && now.Sub(pp.progress) > stallAfter:
		return pp.oldest, held, fmt.Errorf("no progress for %s with events waiting", now.Sub(pp.progress).Round(time.Second))
	}
	return pp.oldest, held, nil
}

func partName(p int) string { return "partition/" + strconv.Itoa(p) }

// watchHealth reports every partition's state and the lag to the metrics
// once a second until ctx ends, then forgets them: a process that no longer
// validates has no say about partitions.
func (v *Validator) watchHealth(ctx context.Context, parts map[int]*partProgress) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	defer func() {
		for p := range parts {
			v.metrics.DropHealth(partName(p))
		}
		v.metrics.DropHealth("lag")
		v.metrics.SetPipelineLag(0) // nothing of this process's is waiting any more
	}()
	for {
		v.reportHealth(parts)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reportHealth reports each partition's state, the lag part of readiness
// and the pipeline lag gauge: the age of the oldest event the partitions
// have read and not counted yet, views held for settling included, and 0
// when there is none (at rest, or with nothing read), never a figure left
// over from the last feed.
func (v *Validator) reportHealth(parts map[int]*partProgress) {
	now := time.Now()
	var oldest, waiting time.Time
	earliest := func(cur *time.Time, t time.Time) {
		if !t.IsZero() && (cur.IsZero() || t.Before(*cur)) {
			*cur = t
		}
	}
	for p, pp := range parts {
		o, held, err := pp.health(now, v.opts.MaxLag)
		v.metrics.SetHealth(partName(p), err)
		earliest(&oldest, o)
		earliest(&waiting, o)
		earliest(&waiting, held)
	}
	var lag int64
	if !waiting.IsZero() {
		lag = max(v.opts.Now().Sub(waiting).Milliseconds(), 0)
	}
	v.metrics.SetPipelineLag(lag)
	// Event times are receive times on the wall clock: the injected one.
	// Settling holds watched visitors' views on purpose for the settle
	// window, and they reach the writer that old: the bound starts after
	// it, or every release would fail readiness for a moment.
	bound := v.opts.MaxLag + max(v.cfg.SettleWindow, 0)
	var lagErr error
	if !oldest.IsZero() {
		if lag := v.opts.Now().Sub(oldest); lag > bound {
			lagErr = fmt.Errorf("oldest event not yet counted is %s old (bound %s)", lag.Round(time.Second), bound)
		}
	}
	v.metrics.SetHealth("lag", lagErr)
}
