package validate

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/validate/judge"
)

// tickCounter is a stream that counts the ticks published to it.
type tickCounter struct {
	jetstream.JetStream
	ticks int
}

func (c *tickCounter) PublishMsg(_ context.Context, msg *nats.Msg, _ ...jetstream.PublishOpt) (*jetstream.PubAck, error) {
	if msg.Header.Get(TickHeader) != "" {
		c.ticks++
	}
	return &jetstream.PubAck{}, nil
}

// quietWriter is a Writer with nothing waiting.
type quietWriter struct{ Writer }

func (quietWriter) Flush(context.Context) error { return nil }
func (quietWriter) Oldest() time.Time           { return time.Time{} }

// A quiet partition holding a due verdict ticks once HeldEvery has passed
// since its last tick. The last tick is placed far from each bound, so a
// slow machine cannot move a case across it.
func TestIdleTicksEveryHeldEvery(t *testing.T) {
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	f := func(every, since time.Duration, want int) {
		t.Helper()
		js := &tickCounter{}
		v, err := New(judge.Config{}, Options{HeldEvery: every, Now: func() time.Time { return now }},
			js, 1, sitesOf{}, nil, viewcount.NewMetrics(), quiet())
		if err != nil {
			t.Fatal(err)
		}
		l := &partitionLoop{v: v, pp: &partProgress{}, w: quietWriter{}, lastTick: time.Now().Add(-since),
			q: holdQueue{window: 1000, max: 10}}
		l.q.push(viewcount.Verdict{Event: viewcount.Event{Time: now.Add(-time.Minute)}})
		if err := l.idle(t.Context()); err != nil {
			t.Fatal(err)
		}
		if js.ticks != want {
			t.Errorf("HeldEvery %s, last tick %s ago: %d ticks, want %d", every, since, js.ticks, want)
		}
	}
	f(0, 0, 0)                          // the default, a second: not yet
	f(0, 30*time.Second, 1)             // ... long past
	f(time.Hour, 30*time.Second, 0)     // set: the default's wait is not enough
	f(time.Hour, 2*time.Hour, 1)        // ... its own is
	f(time.Millisecond, time.Minute, 1) // short, as the end-to-end tests set it
}
