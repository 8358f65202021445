package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/latency/latencytest"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

func testEvent(id string, visitor uint64) viewcount.Event {
	return viewcount.Event{
		Time: time.UnixMilli(1772323200123).UTC(), Site: "example.com", Page: "/p", UA: chromeUA,
		ID: id, Visitor: visitor, Network: visitor >> 8, Source: viewcount.SourceBeacon,
	}
}

func TestPublishConcurrentExactlyOnce(t *testing.T) {
	const partitions, workers, calls = 4, 32, 40
	c := streamtest.Open(t, partitions)
	m := viewcount.NewMetrics()
	p := runPublisher(t, c.JS, partitions, m)

	var wg sync.WaitGroup
	var sent atomic.Int64
	errs := make(chan error, workers*calls)
	// Where Publish said each call's events are (by its first event id).
	var posMu sync.Mutex
	positions := map[string]struct {
		pos   viewcount.StreamPosition
		parts map[int]bool
	}{}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range calls {
				// 1-3 events with random visitors: requests span partitions.
				evs := make([]viewcount.Event, 1+rng.IntN(3))
				for j := range evs {
					evs[j] = testEvent(fmt.Sprintf("w%d-c%d-e%d", w, i, j), rng.Uint64())
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				pos, err := p.Publish(ctx, evs)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				parts := map[int]bool{}
				for _, e := range evs {
					parts[viewcount.Partition(e.Visitor, partitions)] = true
				}
				posMu.Lock()
				positions[evs[0].ID] = struct {
					pos   viewcount.StreamPosition
					parts map[int]bool
				}{pos, parts}
				posMu.Unlock()
				sent.Add(int64(len(evs)))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Publish: %v", err)
	}

	msgs := readStream(t, c.JS)
	seen := map[string]int{}
	msgIDs := map[string]bool{}
	spanning := 0
	for _, msg := range msgs {
		// A call's position is its first event's message (its only one
		// when the call's events share a partition, as one client's do).
		for _, e := range msg.Events {
			got, ok := positions[e.ID]
			if !ok {
				continue
			}
			if len(got.parts) > 1 {
				spanning++
				if !got.pos.IsZero() {
					t.Errorf("call of %s spans partitions %v: position %v, want none", e.ID, got.parts, got.pos)
				}
				continue
			}
			if want := (viewcount.StreamPosition{Partition: viewcount.Partition(e.Visitor, partitions), Seq: msg.Seq}); got.pos != want {
				t.Errorf("call of %s: position %v, want %v (%s)", e.ID, got.pos, want, msg.Subject)
			}
		}
		if msg.MsgID == "" || msgIDs[msg.MsgID] {
			t.Fatalf("message id %q missing or repeated", msg.MsgID)
		}
		msgIDs[msg.MsgID] = true
		for _, e := range msg.Events {
			seen[e.ID]++
			if want := viewcount.Subject(viewcount.Partition(e.Visitor, partitions)); msg.Subject != want {
				t.Fatalf("event %s on %s, want %s", e.ID, msg.Subject, want)
			}
			if e.Page != "/p" || e.UA != chromeUA || !e.Time.Equal(time.UnixMilli(1772323200123)) {
				t.Fatalf("event %s came back as %+v", e.ID, e)
			}
		}
	}
	if spanning == 0 || spanning == len(positions) {
		t.Errorf("%d of %d calls span partitions: the test covers both kinds", spanning, len(positions))
	}
	if int64(len(seen)) != sent.Load() {
		t.Fatalf("%d distinct events in the stream, %d published", len(seen), sent.Load())
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("event %s stored %d times", id, n)
		}
	}
	if got := m.Published.Load(); got != uint64(sent.Load()) {
		t.Fatalf("Published = %d, want %d", got, sent.Load())
	}
	if got := m.Messages.Load(); got != uint64(len(msgs)) {
		t.Fatalf("Messages = %d, stream has %d", got, len(msgs))
	}
	if m.PublishErrors.Load() != 0 {
		t.Fatalf("PublishErrors = %d", m.PublishErrors.Load())
	}
	t.Logf("%d events from %d calls in %d messages", sent.Load(), workers*calls, len(msgs))
}

// publishFails asserts that Publish returns ErrUnavailable, and in time.
func publishFails(t *testing.T, p *Publisher, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	_, err := p.Publish(ctx, []viewcount.Event{testEvent("x", 1), testEvent("y", 2)})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Publish: %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > timeout+time.Second {
		t.Fatalf("Publish took %s with a %s deadline", d, timeout)
	}
}

func TestPublishConnectionClosed(t *testing.T) {
	c := streamtest.Open(t, 2)
	m := viewcount.NewMetricsWith(latency.New())
	p := runPublisher(t, c.JS, 2, m)
	if _, err := p.Publish(context.Background(), []viewcount.Event{testEvent("a", 1)}); err != nil {
		t.Fatal(err)
	}
	c.Close() // stops the embedded server too
	publishFails(t, p, 2*time.Second)
	if got := m.PublishErrors.Load(); got != 2 {
		t.Fatalf("PublishErrors = %d, want 2", got)
	}
	// Only the acknowledged publish has an ack latency.
	if got := latencytest.Read(t, m).Count(t, latency.IngestAckName); got != 1 {
		t.Fatalf("ingest ack observations = %d, want 1", got)
	}
}

// TestPublishServerDown kills a server the client reaches over TCP: the
// connection stays open, reconnecting, and publishes go nowhere. Publish must
// still give up by its deadline, and Run must still stop.
func TestPublishServerDown(t *testing.T) {
	srv := streamtest.Server(t)
	ctx := context.Background()
	c, err := stream.Open(ctx, stream.Config{URL: srv.ClientURL(), Partitions: 2}, discard())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)

	p := NewPublisher(c.JS, 2, viewcount.NewMetrics(), discard())
	p.flushAfter = 200 * time.Millisecond
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(rctx) }()

	if _, err := p.Publish(ctx, []viewcount.Event{testEvent("a", 1)}); err != nil {
		t.Fatal(err)
	}
	srv.Shutdown()
	srv.WaitForShutdown()
	publishFails(t, p, time.Second)
	publishFails(t, p, 500*time.Millisecond)

	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return with messages stuck in flight")
	}
	publishFails(t, p, time.Second) // stopped: fails at once
}

func TestPublishNoStream(t *testing.T) {
	c := streamtest.Open(t, 2)
	p := runPublisher(t, c.JS, 2, viewcount.NewMetrics())
	if err := c.JS.DeleteStream(context.Background(), viewcount.StreamName); err != nil {
		t.Fatal(err)
	}
	publishFails(t, p, 5*time.Second)
}

func TestPublishLifecycle(t *testing.T) {
	c := streamtest.Open(t, 2)
	p := NewPublisher(c.JS, 2, viewcount.NewMetrics(), discard())
	// Not running yet: the deadline ends the wait.
	publishFails(t, p, 100*time.Millisecond)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	if _, err := p.Publish(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Publish(context.Background(), []viewcount.Event{testEvent("a", 1)}); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(ctx); err == nil {
		t.Fatal("second Run accepted")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Stopped: fails at once, without waiting for its (absent) deadline.
	start := time.Now()
	if _, err := p.Publish(context.Background(), []viewcount.Event{testEvent("b", 1)}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("after Run: %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("Publish after Run waited")
	}
	// Oversized requests are a caller's bug, not an outage.
	big := make([]viewcount.Event, maxBatchEvents+1)
	if _, err := p.Publish(context.Background(), big); !errors.Is(err, ErrBadInput) {
		t.Fatalf("oversized request: %v", err)
	}
}

// BenchmarkPublish: 64 concurrent callers publishing 1 event each against
// the real embedded server, as 64 concurrent pixel hits would.
func BenchmarkPublish(b *testing.B) {
	const callers = 64
	c := streamtest.Open(b, viewcount.DefaultPartitions)
	m := viewcount.NewMetrics()
	p := runPublisher(b, c.JS, viewcount.DefaultPartitions, m)
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 2))
			ev := []viewcount.Event{testEvent("", 0)}
			for next.Add(1) <= int64(b.N) {
				ev[0].Visitor = rng.Uint64()
				ev[0].ID = newEventID()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				if _, err := p.Publish(ctx, ev); err != nil {
					b.Error(err)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if n := m.Messages.Load(); n > 0 {
		b.ReportMetric(float64(m.Published.Load())/float64(n), "events/msg")
	}
}

// BenchmarkPublishSync is the baseline group commit is measured against:
// one caller, one synchronous publish (one round trip) per event.
func BenchmarkPublishSync(b *testing.B) {
	c := streamtest.Open(b, viewcount.DefaultPartitions)
	ev := []viewcount.Event{testEvent("", 0)}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		ev[0].Visitor = uint64(i)
		data := viewcount.AppendEvents(nil, ev)
		if _, err := c.JS.Publish(ctx, viewcount.Subject(viewcount.Partition(ev[0].Visitor, viewcount.DefaultPartitions)), data); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
