package validate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	vcstream "github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

// TestReaderSurvivesConsumerNode: on a 3-node cluster, a partition's
// ordered consumer lives on one node and the reader's connection on
// another. When the consumer's node dies, the connection stays up and
// nothing arrives but silence; the reader, polled with short waits as the
// partition loop polls it, must still get the messages published after,
// because its blocking Next lets the iterator notice the missing
// heartbeats and recreate the consumer (with a short Next per poll it
// never did, and the partition stalled for good).
func TestReaderSurvivesConsumerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node NATS cluster")
	}
	cl := streamtest.StartCluster(t, 3)
	ctx := context.Background()
	c, err := vcstream.Open(ctx, vcstream.Config{URL: cl.URL(), Partitions: 1, Replicas: 3}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	nc, err := nats.Connect(cl.NodeURL(0), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	// An ordered consumer lands on a node at random: take one that is
	// not node 0, which the reader's connection uses.
	var it jetstream.MessagesContext
	consumerNode := -1
	for try := 0; try < 20 && it == nil; try++ {
		cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{viewcount.Subject(0)}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := cons.Messages(jetstream.PullHeartbeat(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := cl.Node(info.Cluster.Leader); n != 0 {
			it, consumerNode = m, n
		} else {
			m.Stop()
		}
	}
	if it == nil {
		t.Fatal("every ordered consumer landed on the reader's node")
	}
	rd := newReader(it)
	defer rd.stop()

	publish := func(data string) {
		t.Helper()
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for {
			actx, acancel := context.WithTimeout(pctx, 2*time.Second)
			_, err := c.JS.Publish(actx, viewcount.Subject(0), []byte(data))
			acancel()
			if err == nil {
				return
			}
			if pctx.Err() != nil {
				t.Fatalf("publish %s: %v", data, err)
			}
		}
	}
	read := func(want string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			msg, err := rd.next(ctx, 100*time.Millisecond)
			switch {
			case err == nil && string(msg.Data()) == want:
				return
			case err == nil:
				t.Fatalf("read %q, want %q", msg.Data(), want)
			case !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("read: %v", err)
			case time.Now().After(deadline):
				t.Fatalf("%q not read within 30 s of polling", want)
			}
		}
	}
	publish("before")
	read("before")
	cl.Stop(consumerNode)
	publish("after")
	began := time.Now()
	read("after")
	t.Logf("consumer on n%d lost; the next message read %s after its publish", consumerNode, time.Since(began).Round(time.Millisecond))
	if !nc.IsConnected() || nc.Stats().Reconnects != 0 {
		t.Errorf("the reader's connection was cut (%s, %d reconnects): not the case under test", nc.Status(), nc.Stats().Reconnects)
	}
}
