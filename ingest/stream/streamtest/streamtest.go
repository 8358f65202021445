// Package streamtest starts a real embedded NATS server with JetStream for
// tests: storage in t.TempDir(), torn down by t.Cleanup. Never a fake broker.
package streamtest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/viewcount/viewcount/ingest/stream"
)

// Open starts an embedded server with the stream ensured. partitions 0 means
// the default.
func Open(t testing.TB, partitions int) *stream.Conn {
	t.Helper()
	return OpenDir(t, t.TempDir(), partitions)
}

// OpenDir is Open on a given directory, so a test can restart a server on the
// same files; the returned Conn is closed at cleanup unless closed before.
func OpenDir(t testing.TB, dir string, partitions int) *stream.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := stream.Open(ctx, stream.Config{DataDir: dir, Partitions: partitions}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("streamtest: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}
