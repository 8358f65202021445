package validate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/internal/progress"
)

// pendingMaxMessages bounds the stream messages one partition's pending
// count reads; a longer backlog is counted in part (the count is then a
// floor), which a backlog that long already shows in /readyz.
const pendingMaxMessages = 20000

// PendingCounter counts what a public count does not include yet, per
// site and page: events received but not validated (in the stream after
// what each partition stored), valid views held for settling (by the
// validator in this process, if any), and valid views stored but not fed
// to the rollups yet; and per site the receive time of the oldest of them,
// so a site's lag is what it is waiting for, not the pipeline's last
// feed.
type PendingCounter struct {
	JS         jetstream.JetStream
	Store      feed.Execer
	Partitions int
	Settle     time.Duration                          // the settle window, bounding how late a held view is stored
	Held       func() map[viewcount.PendingKey]uint64 // nil when this process validates nothing
	HeldSince  func() map[string]time.Time            // the oldest held per site; nil as Held
}

// Count returns the pending events by site and page (and site under page
// ""), and the oldest per site.
func (pc PendingCounter) Count(ctx context.Context) (viewcount.Pending, error) {
	out := viewcount.NewPending()
	stored, err := feed.UnfedViews(ctx, pc.Store, pc.Settle, out)
	if err != nil {
		return viewcount.Pending{}, err
	}
	if pc.Held != nil {
		for k, n := range pc.Held() {
			out.Events[k] += n
		}
	}
	if pc.HeldSince != nil {
		for site, t := range pc.HeldSince() {
			out.Since(site, t)
		}
	}
	intents, err := pc.JS.KeyValue(ctx, viewcount.BucketRollup)
	if err != nil {
		return viewcount.Pending{}, fmt.Errorf("validate: pending: %w", err)
	}
	s, err := pc.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		return viewcount.Pending{}, fmt.Errorf("validate: pending: %w", err)
	}
	for p := range pc.Partitions {
		after := stored[p]
		if pr, ok, err := progress.Read(ctx, intents, p); err != nil {
			return viewcount.Pending{}, err
		} else if ok {
			after = max(after, pr.First-1)
		}
		if err := pc.backlog(ctx, s, p, after, out); err != nil {
			return viewcount.Pending{}, err
		}
	}
	return out, nil
}

// backlog counts partition p's events after stream sequence after.
func (pc PendingCounter) backlog(ctx context.Context, s jetstream.Stream, p int, after uint64, out viewcount.Pending) error {
	last, err := lastSeq(ctx, s, p)
	switch {
	case err != nil:
		return fmt.Errorf("validate: pending: %w", err)
	case last <= after:
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{viewcount.Subject(p)},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: after + 1})
	if err != nil {
		return fmt.Errorf("validate: pending: partition %d: %w", p, err)
	}
	// No wait: every message up to last is in the stream already, and
	// last-after counts the other partitions' sequences too, so a fetch
	// waiting for that many would sit out its whole wait on every call.
	batch, err := cons.FetchNoWait(min(int(last-after), pendingMaxMessages))
	if err != nil {
		return fmt.Errorf("validate: pending: partition %d: %w", p, err)
	}
	var evs []viewcount.Event
	for msg := range batch.Messages() {
		if _, tick := tickTime(msg); tick {
			continue
		}
		if evs, err = viewcount.DecodeEvents(evs[:0], msg.Data()); err != nil {
			continue // the validator logs it
		}
		for _, e := range evs {
			out.Add(e.Site, e.Page, 1, e.Time)
		}
	}
	if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("validate: pending: partition %d: %w", p, err)
	}
	return nil
}

// lastSeq is the stream sequence of partition p's last message, 0 when it
// has none.
func lastSeq(ctx context.Context, s jetstream.Stream, p int) (uint64, error) {
	m, err := s.GetLastMsgForSubject(ctx, viewcount.Subject(p))
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("partition %d: last message: %w", p, err)
	}
	return m.Sequence, nil
}
