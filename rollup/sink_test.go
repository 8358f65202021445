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
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/sql/queries"
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
	t0      time.Time // every event's receive time
}

func newPipe(t *testing.T, msgs, perMsg int) *pipe {
	ctx := context.Background()
	p := &pipe{conn: streamtest.Open(t, 1), store: storetest.Migrated(t), msgs: msgs, perMsg: perMsg}
	var err error
	if p.intents, err = p.conn.KV(ctx, viewcount.BucketRollup); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	p.t0 = t0
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

// feed hands every message of the partition, in order, to w as validated
// verdicts, starting after w's resume point (as a validator does).
func (p *pipe) feed(t *testing.T, w *rollup.Writer) error {
	t.Helper()
	ctx := context.Background()
	s, err := p.conn.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	for seq := w.Resume() + 1; seq <= uint64(p.msgs); seq++ {
		raw, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		evs, err := viewcount.DecodeEvents(nil, raw.Data)
		if err != nil {
			t.Fatal(err)
		}
		vs := make([]viewcount.Verdict, len(evs))
		for i, e := range evs {
			vs[i] = viewcount.Verdict{Event: e, Reason: viewcount.Valid, Seq: seq, Index: uint32(i)}
		}
		if err := w.Add(ctx, seq, vs); err != nil {
			return err
		}
	}
	return nil
}

// closedStore is a real store, closed: every insert into it fails, as when
// the store goes away under a running writer.
func closedStore(t *testing.T, database string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Config{DataDir: storetest.Dir(), Database: database}, discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s
}

func (p *pipe) counts(t *testing.T) (raw, views uint64) {
	ctx := context.Background()
	res, err := p.store.Query(ctx, queries.Text("reasons"), store.Params{"site": "sink.example"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.TextRows() {
		n, _ := strconv.ParseUint(r[1], 10, 64)
		raw += n
	}
	res, err = p.store.Query(ctx, queries.Text("page_count"), store.Params{"site": "sink.example", "page": "/p"})
	if err != nil {
		t.Fatal(err)
	}
	views, _ = strconv.ParseUint(res.TextRows()[0][0], 10, 64)
	return raw, views
}

// TestSinkCrashAfterInsert: a batch is inserted and the process dies before
// recording the next one. The restarted writer resumes at the recorded
// batch, rebuilds exactly its range and inserts it under the same token:
// ClickHouse drops the repeat and every count stays exact.
func TestSinkCrashAfterInsert(t *testing.T) {
	p := newPipe(t, 6, 50)
	sink := rollup.NewSink(rollup.Config{MaxRows: 1 << 20}, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now)
	ctx := context.Background()
	w, err := sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 300 || views != 300 {
		t.Fatalf("after the insert: raw %d views %d, want 300", raw, views)
	}

	// The restart: everything from the recorded batch on is delivered again.
	w, err = sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Resume() != 0 {
		t.Fatalf("resume after %d, want 0 (the recorded batch starts at 1)", w.Resume())
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if w.Pending() != 0 {
		t.Fatalf("the rebuilt batch was not flushed at its recorded end (%d rows pending)", w.Pending())
	}
	if err := w.Drain(ctx); err != nil { // it is inserted in the background
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 300 || views != 300 {
		t.Fatalf("after the redo: raw %d views %d, want 300 (counted twice?)", raw, views)
	}
}

// TestSinkCrashBeforeInsert: the batch is recorded but its insert fails (the
// store is gone). The next writer inserts it, once.
func TestSinkCrashBeforeInsert(t *testing.T) {
	p := newPipe(t, 4, 25)
	ctx := context.Background()
	dead := closedStore(t, "sink_dead")
	cfg := rollup.Config{MaxRows: 1 << 20, InsertRetries: 2, RetryBackoff: time.Millisecond}
	w, err := rollup.NewSink(cfg, dead, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err == nil {
		t.Fatal("flush into a closed store succeeded")
	}

	w, err = rollup.NewSink(cfg, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 100 || views != 100 {
		t.Fatalf("raw %d views %d, want 100", raw, views)
	}
	// Resuming again is harmless: the batch is redone under its token.
	w, _ = rollup.NewSink(cfg, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 100 || views != 100 {
		t.Fatalf("after a second resume: raw %d views %d, want 100", raw, views)
	}
}

// TestSinkBatching flushes by size and on demand, and records progress.
func TestSinkBatching(t *testing.T) {
	p := newPipe(t, 10, 30)
	sink := rollup.NewSink(rollup.Config{MaxRows: 100}, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now)
	ctx := context.Background()
	w, err := sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if w.Pending() >= 100 {
		t.Fatalf("pending %d, want a flush at 100 rows", w.Pending())
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 300 || views != 300 {
		t.Fatalf("raw %d views %d, want 300", raw, views)
	}
	w, _ = sink.Open(ctx, 0)
	if w.Resume() != 8 { // batches 1-4, 5-8, 9-10: the last recorded starts at 9
		t.Fatalf("resume after %d, want 8", w.Resume())
	}
}

// TestSinkBackgroundInsertError: a batch inserted in the background fails
// (the store is gone). The failure is not lost: the next batch, Wait and
// Flush all report it, and no later batch is recorded past the failed one,
// so a restarted writer redoes it.
func TestSinkBackgroundInsertError(t *testing.T) {
	p := newPipe(t, 10, 30)
	ctx := context.Background()
	dead := closedStore(t, "sink_dead_async")
	cfg := rollup.Config{MaxRows: 100, InsertRetries: 1, RetryBackoff: time.Millisecond}
	w, err := rollup.NewSink(cfg, dead, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Messages 1-4 fill the first batch, which starts in the background;
	// starting the second (5-8) has to wait for it and gets its error.
	if err := p.feed(t, w); err == nil {
		t.Fatal("feeding past a failed background insert succeeded")
	}
	if err := w.Wait(ctx); err == nil {
		t.Fatal("Wait after a failed insert succeeded: the writer must stay failed")
	}

	w, err = rollup.NewSink(cfg, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Resume() != 0 {
		t.Fatalf("resume after %d, want 0: the failed batch 1-4 is the last recorded", w.Resume())
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 300 || views != 300 {
		t.Fatalf("raw %d views %d, want 300", raw, views)
	}
}

// TestSinkFailedBatchRedone: a background insert fails
// past its retries, the partition stops, and its final flush runs (as
// validate's deferred flush does). That flush must not record the next
// batch: the failed one would never be redone. With a store that fails for
// the first writer and works for the next, every row of every batch must
// end in views_raw exactly once.
func TestSinkFailedBatchRedone(t *testing.T) {
	p := newPipe(t, 10, 30)
	ctx := context.Background()
	cfg := rollup.Config{MaxRows: 100, InsertRetries: 2, RetryBackoff: time.Millisecond}
	w, err := rollup.NewSink(cfg, closedStore(t, "sink_dead_redo"), p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err == nil {
		t.Fatal("feeding past a failed background insert succeeded")
	}
	for name, call := range map[string]func() error{
		"Flush":      func() error { return w.Flush(ctx) },
		"FlushAsync": func() error { return w.FlushAsync(ctx) },
		"Add":        func() error { return w.Add(ctx, 11, nil) },
	} {
		if err := call(); err == nil {
			t.Errorf("%s after a failed insert succeeded", name)
		}
	}

	w, err = rollup.NewSink(cfg, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := p.store.Query(ctx, queries.Text(queries.Verdicts), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range res.TextRows() {
		seen[r[1]+"/"+r[2]]++
	}
	for seq := 1; seq <= p.msgs; seq++ {
		for idx := 0; idx < p.perMsg; idx++ {
			if n := seen[strconv.Itoa(seq)+"/"+strconv.Itoa(idx)]; n != 1 {
				t.Errorf("seq %d idx %d is in views_raw %d times, want 1", seq, idx, n)
			}
		}
	}
	if len(res.TextRows()) != p.msgs*p.perMsg {
		t.Errorf("views_raw has %d rows, want %d", len(res.TextRows()), p.msgs*p.perMsg)
	}
}
