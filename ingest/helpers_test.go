package ingest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// streamMsg is one message of the VIEWS stream, decoded.
type streamMsg struct {
	Subject string
	Seq     uint64 // stream sequence
	MsgID   string
	Data    []byte
	Events  []viewcount.Event
}

// readStream reads every message of the VIEWS stream with an ordered
// consumer, as a validator would.
func readStream(t testing.TB, js jetstream.JetStream) []streamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	total := info.State.Msgs
	if total == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []streamMsg
	for uint64(len(out)) < total {
		batch, err := cons.Fetch(int(min(500, total-uint64(len(out)))), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			evs, err := viewcount.DecodeEvents(nil, m.Data())
			if err != nil {
				t.Fatalf("message on %s: %v", m.Subject(), err)
			}
			meta, err := m.Metadata()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, streamMsg{Subject: m.Subject(), Seq: meta.Sequence.Stream, MsgID: m.Headers().Get(jetstream.MsgIDHeader), Data: m.Data(), Events: evs})
		}
		if err := batch.Error(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// runPublisher starts a Publisher on js and stops it at cleanup, checking
// that Run returned.
func runPublisher(t testing.TB, js jetstream.JetStream, partitions int, m *viewcount.Metrics) *Publisher {
	t.Helper()
	p := NewPublisher(js, partitions, m, discard())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return p
}
