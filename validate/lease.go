package validate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrLeaseLost means another validator took the partition (this one failed
// to renew in time); the partition must stop without writing anything more.
var ErrLeaseLost = errors.New("validate: partition lease lost")

// ErrPaused means a revalidation asked every validator to give its
// partitions up (PauseKey exists): the partition stops cleanly, its
// verdicts flushed, and waits for the pause to end.
var ErrPaused = errors.New("validate: partitions paused for a revalidation")

// PauseKey, in the VC_LEASES bucket, holds every validator off its
// partitions while it exists. Its value is the holder's lease owner, so
// the holder's own leases ignore it; the bucket's TTL removes it within
// LeaseTTL if the holder dies without lifting it.
const PauseKey = "pause"

// pausedBy reports who holds the pause ("" when nobody does).
func pausedBy(ctx context.Context, kv jetstream.KeyValue) (string, error) {
	e, err := kv.Get(ctx, PauseKey)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("validate: read pause: %w", err)
	}
	return string(e.Value()), nil
}

// lease is this process's exclusive claim on a partition, a key in the
// VC_LEASES bucket whose TTL expires it unless renewed. Verdicts are only
// deterministic if one validator at a time owns a partition: two would each
// judge half of a visitor's events. Several processes may be told to own
// the same partitions; the lease makes one of them wait.
type lease struct {
	kv     jetstream.KeyValue
	key    string
	owner  string
	rev    uint64
	renew  time.Duration
	logger *slog.Logger
}

// acquireLease waits until partition p is free (or already ours) and claims it.
func acquireLease(ctx context.Context, kv jetstream.KeyValue, p int, owner string, ttl time.Duration, logger *slog.Logger) (*lease, error) {
	l := &lease{kv: kv, key: "p" + strconv.Itoa(p), owner: owner, renew: ttl / 3, logger: logger}
	waiting, paused := false, false
	for {
		// A paused partition is not taken: its holder is about to, or does.
		if by, err := pausedBy(ctx, kv); err != nil {
			return nil, err
		} else if by != "" && by != owner {
			if !paused {
				paused = true
				logger.Info("partitions paused for a revalidation; waiting", "partition", p)
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Second):
			}
			continue
		}
		rev, err := kv.Create(ctx, l.key, []byte(owner))
		if err == nil {
			l.rev = rev
			if waiting {
				logger.Info("partition lease acquired", "partition", p)
			}
			return l, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return nil, fmt.Errorf("validate: partition %d: lease: %w", p, err)
		}
		if e, err := kv.Get(ctx, l.key); err == nil && string(e.Value()) == owner {
			// Our own claim from before a restart of the partition.
			if rev, err := kv.Update(ctx, l.key, []byte(owner), e.Revision()); err == nil {
				l.rev = rev
				return l, nil
			}
		} else if err == nil && !waiting {
			waiting = true
			logger.Info("partition owned by another validator; waiting for its lease", "partition", p, "owner", string(e.Value()))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// keep renews the lease until ctx ends; it returns ErrLeaseLost if a renewal
// is refused (the lease expired and someone else holds it).
func (l *lease) keep(ctx context.Context) error {
	t := time.NewTicker(l.renew)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := l.keepOnce(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
	}
}

// keepOnce renews the lease once, and gives it up (ErrPaused) when a
// revalidation asks for the partitions.
func (l *lease) keepOnce(ctx context.Context) error {
	rev, err := l.kv.Update(ctx, l.key, []byte(l.owner), l.rev)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrLeaseLost, l.key, err)
	}
	l.rev = rev
	if by, err := pausedBy(ctx, l.kv); err != nil {
		return err
	} else if by != "" && by != l.owner {
		return ErrPaused
	}
	return nil
}

// release gives the partition up at once, for a clean shutdown.
func (l *lease) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
}
