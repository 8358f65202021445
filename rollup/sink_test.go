package rollup_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest/stream"
	"github.com/viewcount/viewcount/ingest/stream/streamtest"
	"github.com/viewcount/viewcount/rollup"
	vcsql "github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// pipe is a real stream with msgs messages of perMsg events each on
// partition 0, and a real store with the schema.
type pipe struct {
	conn    *stream.Conn
	store   store.Store
	intents jetstream.KeyValue
	msgs    int
	perMsg  int
}

func newPipe(t *testing.T, msgs, perMsg int) *pipe {
	ctx := context.Background()
	p := &pipe{conn: streamtest.Open(t, 1), store: storetest.Open(t), msgs: msgs, perMsg: perMsg}
	if err := rollup.Migrate(ctx, p.store, discard()); err != nil {
		t.Fatal(err)
	}
	var err error
	if p.intents, err = p.conn.KV(ctx, viewcount.BucketRollup); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	for m := 0; m < msgs; m++ {
		evs := make([]viewcount.Event, perMsg)
		for i := range evs {
			n := m*perMsg + i
			evs[i] = viewcount.Event{Time: t0, Site: "sink.example", Page: "/p", UA: "Mozilla/5.0", ID: "e" + strconv.Itoa(n), Visitor: uint64(n), Source: viewcount.SourcePixel}
		}
		if _, err := p.conn.JS.Publish(ctx, viewcount.Subject(0), viewcount.AppendEvents(nil, evs)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// consumer (re)creates the partition's durable consumer with the validator's
// ack policy, so a deleted consumer redelivers from the start.
func (p *pipe) consumer(t *testing.T) jetstream.Consumer {
	c, err := p.conn.JS.CreateOrUpdateConsumer(context.Background(), viewcount.StreamName, jetstream.ConsumerConfig{
		Durable: "sink-test", FilterSubject: viewcount.Subject(0), AckPolicy: jetstream.AckAllPolicy, AckWait: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// feed hands every message of the consumer to w as validated verdicts.
func (p *pipe) feed(t *testing.T, c jetstream.Consumer, w *rollup.Writer) error {
	batch, err := c.Fetch(p.msgs, jetstream.FetchMaxWait(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for msg := range batch.Messages() {
		md, _ := msg.Metadata()
		evs, err := viewcount.DecodeEvents(nil, msg.Data())
		if err != nil {
			t.Fatal(err)
		}
		vs := make([]viewcount.Verdict, len(evs))
		for i, e := range evs {
			vs[i] = viewcount.Verdict{Event: e, Reason: viewcount.Valid, Seq: md.Sequence.Stream, Index: uint32(i)}
		}
		if err := w.Add(context.Background(), md.Sequence.Stream, vs, msg); err != nil {
			return err
		}
		n++
	}
	if n != p.msgs {
		t.Fatalf("fetched %d messages, want %d", n, p.msgs)
	}
	return nil
}

func (p *pipe) counts(t *testing.T) (raw, views uint64) {
	ctx := context.Background()
	res, err := p.store.Query(ctx, vcsql.Query("reasons"), store.Params{"site": "sink.example"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Rows {
		n, _ := strconv.ParseUint(r[1], 10, 64)
		raw += n
	}
	res, err = p.store.Query(ctx, vcsql.Query("page_count"), store.Params{"site": "sink.example", "page": "/p"})
	if err != nil {
		t.Fatal(err)
	}
	views, _ = strconv.ParseUint(res.Rows[0][0], 10, 64)
	return raw, views
}

// TestSinkCrashAfterInsert inserts a batch whose acknowledgement is lost (the
// consumer disappears between insert and ack, as when the process dies
// there). The redelivered messages are regrouped by a new writer from the
// recorded intent and deduplicated: every count stays exact.
func TestSinkCrashAfterInsert(t *testing.T) {
	p := newPipe(t, 6, 50)
	metrics := viewcount.NewMetrics()
	sink := rollup.NewSink(rollup.Config{MaxRows: 1 << 20}, p.store, p.intents, metrics, discard(), time.Now)
	ctx := context.Background()

	c := p.consumer(t)
	w, err := sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, c, w); err != nil {
		t.Fatal(err)
	}
	// The "crash": the ack cannot reach the consumer.
	if err := p.conn.JS.DeleteConsumer(ctx, viewcount.StreamName, "sink-test"); err != nil {
		t.Fatal(err)
	}
	ackCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
	if err := w.Flush(ackCtx); err == nil {
		t.Fatal("flush acknowledged on a deleted consumer")
	}
	cancel()
	if raw, views := p.counts(t); raw != 300 || views != 300 {
		t.Fatalf("after first insert: raw %d views %d, want 300", raw, views)
	}

	// Restart: a new writer, the whole range redelivered.
	c = p.consumer(t)
	w, err = sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, c, w); err != nil {
		t.Fatal(err)
	}
	if w.Pending() != 0 {
		t.Fatalf("the rebuilt batch was not flushed at its recorded end (%d rows pending)", w.Pending())
	}
	if raw, views := p.counts(t); raw != 300 || views != 300 {
		t.Fatalf("after redelivery: raw %d views %d, want 300 (counted twice?)", raw, views)
	}
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumAckPending != 0 || info.NumPending != 0 {
		t.Fatalf("messages left unacknowledged: %+v", info)
	}
}

// TestSinkBatching flushes by size and on demand, acknowledging everything.
func TestSinkBatching(t *testing.T) {
	p := newPipe(t, 10, 30)
	sink := rollup.NewSink(rollup.Config{MaxRows: 100}, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now)
	ctx := context.Background()
	c := p.consumer(t)
	w, err := sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, c, w); err != nil {
		t.Fatal(err)
	}
	if w.Pending() >= 100 {
		t.Fatalf("pending %d, want a flush at 100 rows", w.Pending())
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 300 || views != 300 {
		t.Fatalf("raw %d views %d, want 300", raw, views)
	}
	info, _ := c.Info(ctx)
	if info.AckFloor.Stream != 10 {
		t.Fatalf("ack floor %d, want 10", info.AckFloor.Stream)
	}
}
