package rollup_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/rollup"
)

// noFeed is a sink config whose writers feed only when drained: the tests
// below decide when a feed runs.
var noFeed = rollup.Config{MaxRows: 1 << 20, Feed: rollup.FeedConfig{Rows: 1 << 30, Every: time.Hour}}

// TestFeedTakesRowsByBatch: a verdict held for settling is stored by a
// later batch under its own, earlier sequence. The feed takes rows by the
// batch that stored them, so it is counted although its sequence lies in
// a range already fed. FedThrough says how far the feeds reached: every
// feed here has run, so Done is Through.
func TestFeedTakesRowsByBatch(t *testing.T) {
	p := newPipe(t, 4, 10)
	ctx := context.Background()
	w, err := rollup.NewSink(noFeed, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	fedThrough := func(want map[int]uint64) {
		t.Helper()
		got, err := feed.FedThrough(ctx, p.store)
		if err != nil || len(got) != len(want) {
			t.Fatalf("FedThrough: %v %v, want %v", got, err, want)
		}
		for k, v := range want {
			if got[k] != (feed.Fed{Through: v, Done: v}) {
				t.Fatalf("FedThrough: %v, want %v through and done", got, want)
			}
		}
	}
	// Nothing fed: no partition.
	fedThrough(map[int]uint64{})
	if err := p.feed(t, w); err != nil { // messages 1-4: 40 views
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 40 || views != 40 {
		t.Fatalf("raw %d views %d, want 40", raw, views)
	}
	fedThrough(map[int]uint64{0: 4})
	held := viewcount.Verdict{Event: viewcount.Event{Time: time.Now().UTC(), Site: "sink.example", Page: "/p", ID: "held", Visitor: 99,
		Source: viewcount.SourcePixel}, Reason: viewcount.Valid, Seq: 2, Index: 10}
	if err := w.Add(ctx, 5, []viewcount.Verdict{held}); err != nil { // released by a tick at 5
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 41 || views != 41 {
		t.Fatalf("after the held view: raw %d views %d, want 41", raw, views)
	}
	fedThrough(map[int]uint64{0: 5})
}

// TestFeedRedoneAfterCrash: a crash between recording a feed and running
// it. The next writer redoes the recorded feed before anything else, and
// redoing it again adds nothing.
func TestFeedRedoneAfterCrash(t *testing.T) {
	p := newPipe(t, 6, 10)
	ctx := context.Background()
	sink := rollup.NewSink(noFeed, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now)
	w, err := sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil { // stored, not fed
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 60 || views != 0 {
		t.Fatalf("stored: raw %d views %d, want 60 and 0", raw, views)
	}
	if err := feed.Record(ctx, p.store, feed.Range{Partition: 0, First: 1, Last: 6}); err != nil { // and the crash
		t.Fatal(err)
	}
	// Recorded, never run: it bounds what the rollups hold, and is not
	// taken for done.
	if got, err := feed.FedThrough(ctx, p.store); err != nil || len(got) != 1 || got[0] != (feed.Fed{Through: 6}) {
		t.Fatalf("FedThrough after the crash: %v %v, want through 6, nothing done", got, err)
	}
	for i := range 2 {
		w, err := sink.Open(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.feed(t, w); err != nil { // the recorded batch again: deduplicated
			t.Fatal(err)
		}
		if err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		if raw, views := p.counts(t); raw != 60 || views != 60 {
			t.Fatalf("restart %d: raw %d views %d, want 60", i+1, raw, views)
		}
		if got, err := feed.FedThrough(ctx, p.store); err != nil || got[0] != (feed.Fed{Through: 6, Done: 6}) {
			t.Fatalf("restart %d: FedThrough %v %v, want through and done 6", i+1, got, err)
		}
	}
}

// TestFeedCatchesUpAfterCrash: batches stored by a writer that died before
// feeding them lie between the last feed and the validator's progress. The
// next writer feeds them once; so does CatchUp, which finds nothing left.
func TestFeedCatchesUpAfterCrash(t *testing.T) {
	p := newPipe(t, 8, 10)
	ctx := context.Background()
	cfg := noFeed
	cfg.MaxRows = 20 // a batch per two messages: 1-2, 3-4, 5-6, 7-8
	sink := rollup.NewSink(cfg, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now)
	w, err := sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil { // all four stored, none fed; then the crash
		t.Fatal(err)
	}
	if n, err := feed.Unfed(ctx, p.store); err != nil || n != 80 {
		t.Fatalf("unfed = %d (%v), want 80", n, err)
	}
	w, err = sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Resume() != 6 {
		t.Fatalf("resume after %d, want 6 (the recorded batch is 7-8)", w.Resume())
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 80 || views != 80 {
		t.Fatalf("after the restart: raw %d views %d, want 80", raw, views)
	}
	if n, err := feed.Unfed(ctx, p.store); err != nil || n != 0 {
		t.Fatalf("unfed after the restart = %d (%v), want 0", n, err)
	}
	if n, err := feed.CatchUp(ctx, p.store); err != nil || n != 0 {
		t.Fatalf("catch up after a drained writer fed %d rows (%v), want 0", n, err)
	}
	if raw, views := p.counts(t); raw != 80 || views != 80 {
		t.Fatalf("after catching up: raw %d views %d, want 80", raw, views)
	}
}

// TestFeedOnTime: a quiet partition's stored rows reach the rollups within
// Every, without a drain.
func TestFeedOnTime(t *testing.T) {
	p := newPipe(t, 2, 5)
	ctx := context.Background()
	cfg := rollup.Config{MaxRows: 1 << 20, Feed: rollup.FeedConfig{Every: 50 * time.Millisecond}}
	w, err := rollup.NewSink(cfg, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := w.Flush(ctx); err != nil { // what a quiet validator calls every FlushEvery
			t.Fatal(err)
		}
		if _, views := p.counts(t); views == 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("stored rows not fed within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFeedAfterLostBatch: the batch a previous writer recorded and stored
// but never fed, whose messages are gone from the stream by the restart
// (retention), is never handed to the new writer again. Its rows are older
// than anything the new writer stores, so the first feed after the
// restart must not bound its read by the new rows' receive times.
func TestFeedAfterLostBatch(t *testing.T) {
	p := newPipe(t, 0, 0)
	ctx := context.Background()
	sink := rollup.NewSink(noFeed, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now)
	now := time.Now().UTC().Truncate(time.Millisecond)
	view := func(id string, at time.Time, seq uint64) []viewcount.Verdict {
		return []viewcount.Verdict{{Event: viewcount.Event{Time: at, Site: "sink.example", Page: "/p", ID: id, Visitor: seq,
			Source: viewcount.SourcePixel}, Reason: viewcount.Valid, Seq: seq}}
	}
	w, err := sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 2; seq++ {
		if err := w.Add(ctx, seq, view("old"+strconv.FormatUint(seq, 10), now.Add(-2*time.Hour), seq)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil { // batch 1-2 stored and recorded, not fed; then the crash
		t.Fatal(err)
	}
	w, err = sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(ctx, 3, view("new", now, 3)); err != nil { // 1-2 are gone from the stream
		t.Fatal(err)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 3 || views != 3 {
		t.Fatalf("raw %d views %d, want 3: the lost batch's rows were not fed", raw, views)
	}
}
