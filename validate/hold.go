package validate

import (
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

// TickHeader marks a tick: an empty message a validator publishes to its own
// partition when it holds verdicts and the partition is quiet. Its value is
// the publisher's clock in Unix milliseconds. Ticks are part of the stream,
// so a replay sees them at the same place and releases held verdicts at the
// same point: holding stays a function of the stream.
const TickHeader = "Viewcount-Tick"

// holdQueue keeps the valid verdicts of watched events (a visitor or network
// busy enough that it may turn out to be a flood or a farm) for the settle
// window, then releases them through Rules.Settle: a view counted only once
// the next minutes of its visitor and network are known. Everything else is
// written at once. Release is driven by the partition's watermark, the
// latest event or tick time in the stream, never by the wall clock.
type holdQueue struct {
	window int64 // settle window, ms
	mark   int64 // watermark, Unix ms
	items  []viewcount.Verdict
}

func (q *holdQueue) observe(t int64) { q.mark = max(q.mark, t) }

func (q *holdQueue) push(v viewcount.Verdict) { q.items = append(q.items, v) }

// release appends to out, settled and in arrival order, the held verdicts
// whose window the watermark has passed.
func (q *holdQueue) release(out []viewcount.Verdict, settle func(*viewcount.Verdict)) []viewcount.Verdict {
	keep := q.items[:0]
	for _, v := range q.items {
		if v.Time.UnixMilli()+q.window <= q.mark {
			settle(&v)
			out = append(out, v)
		} else {
			keep = append(keep, v)
		}
	}
	clear(q.items[len(keep):])
	q.items = keep
	return out
}

// due reports whether a held verdict's window has passed by the clock now:
// then a quiet partition needs a tick to release it.
func (q *holdQueue) due(now time.Time) bool {
	return len(q.items) > 0 && q.items[0].Time.UnixMilli()+q.window < now.UnixMilli()
}

// tickTime returns the time of a tick message, or false for an event batch.
func tickTime(msg jetstream.Msg) (int64, bool) {
	h := msg.Headers().Get(TickHeader)
	if h == "" {
		return 0, false
	}
	t, err := strconv.ParseInt(h, 10, 64)
	return t, err == nil
}
