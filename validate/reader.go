package validate

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// reader calls a partition's message iterator on a goroutine of its own,
// each Next without a deadline, and hands the result over when the
// partition loop asks.
//
// The loop itself waits at most FlushEvery for a message, to flush and
// tick while the partition is quiet. Calling the iterator's Next with such
// a short deadline hid a lost consumer: nats.go arms the missing-heartbeat
// check afresh on every Next call, for twice the heartbeat (10 s for an
// ordered consumer), so it never fired under a 1 s Next and the ordered
// consumer never recreated itself. An ordered consumer is a single copy on
// one node of a cluster; when that node died while the validator's own
// connection (to another node) stayed up, the partition read nothing more
// and, idle, looked caught up (TestNATSClusterKills found it). A Next that
// blocks lets the iterator see the heartbeats stop and recreate the
// consumer where the partition left off.
type reader struct {
	it      jetstream.MessagesContext
	want    chan struct{} // asks the goroutine for the next message
	got     chan read     // its answer; one at most
	pending bool          // asked and not yet answered
}

type read struct {
	msg jetstream.Msg
	err error
}

func newReader(it jetstream.MessagesContext) *reader {
	r := &reader{it: it, want: make(chan struct{}), got: make(chan read, 1)}
	go func() {
		for range r.want {
			msg, err := it.Next()
			r.got <- read{msg, err}
		}
	}()
	return r
}

// next returns the next message, or context.DeadlineExceeded when none
// came within wait (the request stays open for the next call), or ctx's
// error. Only the partition's goroutine calls it.
func (r *reader) next(ctx context.Context, wait time.Duration) (jetstream.Msg, error) {
	if !r.pending {
		r.want <- struct{}{}
		r.pending = true
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case res := <-r.got:
		r.pending = false
		return res.msg, res.err
	case <-t.C:
		return nil, context.DeadlineExceeded
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stop ends the iterator, which ends a Next in progress, and the
// goroutine with it. A message it read and nobody took is dropped: an
// ordered consumer acknowledges nothing, and the next incarnation of the
// partition reads from its recorded progress.
func (r *reader) stop() {
	r.it.Stop()
	close(r.want)
}
