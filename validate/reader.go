package validate

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// reader calls a partition's message iterator on a goroutine of its own,
// each Next without a deadline, reading a little ahead of the partition
// loop.
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
	it   jetstream.MessagesContext
	out  chan read     // what the goroutine read, in order
	done chan struct{} // closed by stop
}

type read struct {
	msg jetstream.Msg
	err error
}

// readAhead is how many messages the goroutine may have read that the
// partition loop has not taken: enough that the loop rarely waits for a
// hand-over, few beside the iterator's own buffer (FetchBatch).
const readAhead = 32

func newReader(it jetstream.MessagesContext) *reader {
	r := &reader{it: it, out: make(chan read, readAhead), done: make(chan struct{})}
	go func() {
		for {
			msg, err := it.Next()
			select {
			case r.out <- read{msg, err}:
			case <-r.done:
				return
			}
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return // every later Next says the same
			}
		}
	}()
	return r
}

// next returns the next message (or the iterator's error), or
// context.DeadlineExceeded when none came within wait, or ctx's error.
// Only the partition's goroutine calls it.
func (r *reader) next(ctx context.Context, wait time.Duration) (jetstream.Msg, error) {
	select {
	case res := <-r.out: // no timer for a message already waiting
		return res.msg, res.err
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case res := <-r.out:
		return res.msg, res.err
	case <-t.C:
		return nil, context.DeadlineExceeded
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stop ends the iterator, which ends a Next in progress, and the
// goroutine with it. Messages read and not taken are dropped: an ordered
// consumer acknowledges nothing, and the partition's next incarnation
// reads from its recorded progress.
func (r *reader) stop() {
	r.it.Stop()
	close(r.done)
}
