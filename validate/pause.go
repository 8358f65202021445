package validate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	vcstream "github.com/viewcount/viewcount/internal/stream"
)

// Hold is a revalidation's exclusive claim on every partition: the pause
// key, which makes each validator stop cleanly (flushing and feeding what it
// judged) and give its lease up, and then the leases themselves. While it
// is held nothing writes views_raw or the rollups, so verdicts can be
// rewritten and rollups rebuilt and swapped without losing a concurrent
// insert. Ingest goes on: events wait in the stream, and the validators
// resume from their progress records when the hold is released.
type Hold struct {
	kv     jetstream.KeyValue
	owner  string
	leases []*lease
	cancel context.CancelCauseFunc
	done   sync.WaitGroup
	ctx    context.Context
	logger *slog.Logger
}

// HoldPartitions takes the pause and then all partitions' leases, waiting
// for each validator to let go (within the lease's renewal interval, a
// few seconds). The returned Hold's Context ends if the claim is lost;
// Release gives everything back.
func HoldPartitions(ctx context.Context, js jetstream.JetStream, partitions int, owner string, logger *slog.Logger) (*Hold, error) {
	kv, err := js.KeyValue(ctx, viewcount.BucketLeases)
	if err != nil {
		return nil, fmt.Errorf("validate: hold partitions: %w", err)
	}
	if by, err := pausedBy(ctx, kv); err != nil {
		return nil, err
	} else if by != "" && by != owner {
		return nil, fmt.Errorf("validate: hold partitions: another revalidation (%s) holds them", by)
	}
	if _, err := kv.Put(ctx, PauseKey, []byte(owner)); err != nil {
		return nil, fmt.Errorf("validate: hold partitions: pause: %w", err)
	}
	hctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	h := &Hold{kv: kv, owner: owner, cancel: cancel, ctx: hctx, logger: logger}
	h.keepPause()
	for p := range partitions {
		l, err := acquireLease(ctx, kv, p, owner, vcstream.LeaseTTL, logger)
		if err != nil {
			h.Release()
			return nil, fmt.Errorf("validate: hold partition %d: %w", p, err)
		}
		h.leases = append(h.leases, l)
		h.done.Add(1)
		go func() {
			defer h.done.Done()
			if err := l.keep(hctx); err != nil {
				cancel(err)
			}
		}()
	}
	return h, nil
}

// keepPause renews the pause key until the hold ends: a Put restarts its
// age in the bucket, whose TTL would otherwise remove it.
func (h *Hold) keepPause() {
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(vcstream.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-h.ctx.Done():
				return
			case <-t.C:
				if _, err := h.kv.Put(h.ctx, PauseKey, []byte(h.owner)); err != nil && h.ctx.Err() == nil {
					h.cancel(fmt.Errorf("validate: renew pause: %w", err))
					return
				}
			}
		}
	}()
}

// Context ends when the hold is lost (a lease or the pause not renewed in
// time); work done under the hold must stop then.
func (h *Hold) Context() context.Context { return h.ctx }

// Release gives the partitions back and lifts the pause. It returns why
// the hold was lost, if it was.
func (h *Hold) Release() error {
	lost := context.Cause(h.ctx)
	h.cancel(nil)
	h.done.Wait()
	for _, l := range h.leases {
		l.release()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := h.kv.Delete(ctx, PauseKey); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		h.logger.Warn("pause not lifted; it expires by itself", "err", err, "within", vcstream.LeaseTTL)
	}
	if lost != nil && !errors.Is(lost, context.Canceled) {
		return lost
	}
	return nil
}
