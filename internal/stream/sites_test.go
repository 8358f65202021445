package stream_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

func TestSitesRegistry(t *testing.T) {
	ctx := context.Background()
	c := streamtest.Open(t, 4)
	a, err := stream.OpenSites(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	site, token, err := a.Add(ctx, "Example.COM")
	if err != nil {
		t.Fatal(err)
	}
	if site.Domain != "example.com" || !a.Known("example.com") || !site.CheckToken(token) || site.CheckToken(token+"x") {
		t.Fatalf("after Add: %+v known=%v", site, a.Known("example.com"))
	}
	if _, _, err := a.Add(ctx, "example.com"); !errors.Is(err, viewcount.ErrSiteExists) {
		t.Fatalf("second Add: %v, want ErrSiteExists", err)
	}
	if _, _, err := a.Add(ctx, "not a domain"); !errors.Is(err, viewcount.ErrBadSite) {
		t.Fatalf("bad domain: %v, want ErrBadSite", err)
	}
	// Only public-looking host names are registered (viewcount.CheckRegistrable).
	for _, d := range []string{"localhost", "127.0.0.1", "_.test", "[::1]", "::1", "10.0.0.1:8080", "a.localhost", "a.123"} {
		if _, _, err := a.Add(ctx, d); !errors.Is(err, viewcount.ErrBadSite) {
			t.Errorf("Add(%q): %v, want ErrBadSite", d, err)
		}
	}
	if _, err := a.Get(ctx, "nope.example"); !errors.Is(err, viewcount.ErrSiteUnknown) {
		t.Fatalf("Get unknown: %v", err)
	}

	// A second registry (another process) loads existing sites and sees new ones.
	b, err := stream.OpenSites(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if !b.Known("example.com") {
		t.Fatal("second registry did not load example.com")
	}
	if _, _, err := a.Add(ctx, "blog.example"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !b.Known("blog.example") {
		if time.Now().After(deadline) {
			t.Fatal("watch did not deliver blog.example")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPartitionsFixed(t *testing.T) {
	dir := t.TempDir()
	c := streamtest.OpenDir(t, dir, 4)
	c.Close()
	ctx := context.Background()
	_, err := stream.Open(ctx, stream.Config{DataDir: dir, Partitions: 8}, discard())
	if !errors.Is(err, stream.ErrPartitions) {
		t.Fatalf("reopen with other partitions: %v, want ErrPartitions", err)
	}
	c2, err := stream.Open(ctx, stream.Config{DataDir: dir, Partitions: 4}, discard())
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if err := c2.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	c2.Close()
}

// Unconfigured, an existing stream's count is kept: 8, the older default,
// rather than today's; a new stream gets today's, which depends on where it
// lives (TestNewClusterStreamPartitions).
func TestPartitionsAdoptedFromStream(t *testing.T) {
	dir := t.TempDir()
	streamtest.OpenDir(t, dir, 8).Close()
	c, err := stream.Open(context.Background(), stream.Config{DataDir: dir}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Partitions != 8 {
		t.Errorf("%d partitions, want 8", c.Partitions)
	}
	fresh, err := stream.Open(context.Background(), stream.Config{DataDir: t.TempDir()}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if fresh.Partitions != viewcount.EmbeddedPartitions {
		t.Errorf("new embedded stream: %d partitions, want %d", fresh.Partitions, viewcount.EmbeddedPartitions)
	}
}

// TestNewClusterStreamPartitions: a stream created on a NATS server the
// process reaches by URL gets DefaultPartitions, so validators can be
// spread over processes.
func TestNewClusterStreamPartitions(t *testing.T) {
	srv := streamtest.Server(t)
	c, err := stream.Open(context.Background(), stream.Config{URL: srv.ClientURL()}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Partitions != viewcount.DefaultPartitions {
		t.Errorf("new cluster stream: %d partitions, want %d", c.Partitions, viewcount.DefaultPartitions)
	}
}

// TestReplicasOnOneServer: the stream and every bucket are created with the
// configured replica count (1 by default), and the embedded server, one
// node, refuses more with an error naming NATS_URL. The three-node cluster
// that keeps three is in cmd/viewcount's cluster test.
func TestReplicasOnOneServer(t *testing.T) {
	ctx := context.Background()
	c, err := stream.Open(ctx, stream.Config{DataDir: t.TempDir()}, discard())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := c.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	if r := s.CachedInfo().Config.Replicas; r != 1 {
		t.Errorf("stream replicas %d, want 1", r)
	}
	for _, b := range []string{viewcount.BucketSites, viewcount.BucketLeases, viewcount.BucketRules} {
		kv, err := c.JS.KeyValue(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		st, err := kv.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r := st.(*jetstream.KeyValueBucketStatus).StreamInfo().Config.Replicas; r != 1 {
			t.Errorf("bucket %s replicas %d, want 1", b, r)
		}
	}
	_, err = stream.Open(ctx, stream.Config{DataDir: t.TempDir(), Replicas: 3}, discard())
	if err == nil || !strings.Contains(err.Error(), "NATS_URL") {
		t.Errorf("embedded with 3 replicas: %v, want an error naming NATS_URL", err)
	}
}
