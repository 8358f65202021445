package stream_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

// replicas reads the replica count of the stream and of every bucket.
func replicas(t *testing.T, c *stream.Conn) map[string]int {
	t.Helper()
	ctx := context.Background()
	out := map[string]int{}
	s, err := c.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	out[viewcount.StreamName] = s.CachedInfo().Config.Replicas
	for _, b := range []string{viewcount.BucketSites, viewcount.BucketSalts, viewcount.BucketRollup, viewcount.BucketLeases, viewcount.BucketRules} {
		kv, err := c.JS.KeyValue(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		st, err := kv.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out[b] = st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Replicas
	}
	return out
}

// TestClusterReplicas: on a 3-node cluster reached through a URL list, the
// stream and every bucket keep 3 replicas, and the stream takes writes
// while one node is down (a quorum of 2) and from a client whose own
// node went away.
func TestClusterReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node NATS cluster")
	}
	cl := streamtest.StartCluster(t, 3)
	ctx := context.Background()
	c, err := stream.Open(ctx, stream.Config{URL: cl.URL(), Partitions: 2, Replicas: 3}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for name, r := range replicas(t, c) {
		if r != 3 {
			t.Errorf("%s: %d replicas, want 3", name, r)
		}
	}

	// A role started without the setting keeps the deployment's copies.
	c0, err := stream.Open(ctx, stream.Config{URL: cl.URL()}, discard())
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range replicas(t, c0) {
		if r != 3 {
			t.Errorf("after an open without Replicas, %s has %d replicas, want 3", name, r)
		}
	}
	c0.Close()

	own := cl.Node(c.NC.ConnectedServerName())
	if own < 0 {
		t.Fatalf("connected to %q, not a node of the cluster", c.NC.ConnectedServerName())
	}
	cl.Stop(own)
	publish := func(n int) {
		t.Helper()
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		// Each try has its own timeout: a request sent as the node went
		// down is never answered, as ingest's publisher finds (answering
		// 503 for the client to retry).
		for {
			actx, acancel := context.WithTimeout(pctx, 2*time.Second)
			_, err := c.JS.Publish(actx, viewcount.Subject(n%2), []byte("x"))
			acancel()
			if err == nil {
				return
			}
			if pctx.Err() != nil {
				t.Fatalf("publish %d: %v", n, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := range 10 {
		publish(i)
	}
	if got := cl.Node(c.NC.ConnectedServerName()); got == own || got < 0 {
		t.Errorf("after node %d stopped the client is on %q", own, c.NC.ConnectedServerName())
	}
	cl.Restart(own)
	publish(10)
	// The restarted node catches up: every replica current, none lost.
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, err := c.JS.Stream(ctx, viewcount.StreamName)
		if err == nil {
			info := s.CachedInfo()
			current := info.Cluster != nil && len(info.Cluster.Replicas) == 2
			for _, r := range info.Cluster.Replicas {
				current = current && r.Current && !r.Offline
			}
			if current && info.State.Msgs == 11 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("stream after restart: %d messages, replicas %+v", info.State.Msgs, info.Cluster.Replicas)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}
