package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/latency/latencytest"
	"github.com/viewcount/viewcount/rollup"
)

// TestWriterObservesLatency: the real writer on a real stream and store
// times each batch's insert and each feed, and when a feed ends records
// how long its rows waited in views_raw and, per batch, how old its oldest
// event is on the sink's clock.
func TestWriterObservesLatency(t *testing.T) {
	p := newPipe(t, 6, 10)
	ctx := context.Background()
	m := viewcount.NewMetricsWith(latency.New())
	cfg := noFeed
	cfg.MaxRows = 20 // a batch per two messages: three batches, one feed when drained
	clock := func() time.Time { return p.t0.Add(42 * time.Second) }
	w, err := rollup.NewSink(cfg, p.store, p.intents, m, discard(), clock).Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.feed(t, w); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	s := latencytest.Read(t, m)
	if got := s.Count(t, latency.InsertName); got != 3 {
		t.Errorf("inserts timed: %d, want 3", got)
	}
	if got := s.Count(t, latency.FeedName) + s.Count(t, latency.ValidationLagName); got != 0 {
		t.Errorf("%d feed observations before any feed", got)
	}
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if raw, views := p.counts(t); raw != 60 || views != 60 {
		t.Fatalf("raw %d views %d, want 60", raw, views)
	}

	s = latencytest.Read(t, m)
	ins, fd, fl, vl := s.Histogram(t, latency.InsertName), s.Histogram(t, latency.FeedName),
		s.Histogram(t, latency.FeedLagName), s.Histogram(t, latency.ValidationLagName)
	if ins.GetSampleCount() != 3 || ins.GetSampleSum() <= 0 {
		t.Errorf("insert: %d observations, %g s", ins.GetSampleCount(), ins.GetSampleSum())
	}
	if fd.GetSampleCount() != 1 || fd.GetSampleSum() <= 0 {
		t.Errorf("feed: %d observations, %g s", fd.GetSampleCount(), fd.GetSampleSum())
	}
	// The rows waited from the first batch's insert to the feed's end: at
	// least the feed itself.
	if fl.GetSampleCount() != 1 || fl.GetSampleSum() < fd.GetSampleSum() {
		t.Errorf("feed lag: %d observations, %g s (the feed took %g s)", fl.GetSampleCount(), fl.GetSampleSum(), fd.GetSampleSum())
	}
	// One per batch, each 42 s on the injected clock.
	if vl.GetSampleCount() != 3 || vl.GetSampleSum() != 3*42 {
		t.Errorf("validation lag: %d observations, %g s in all; want 3 of 42 s", vl.GetSampleCount(), vl.GetSampleSum())
	}

}
