// Package streamtest starts real NATS servers with JetStream for tests: an
// embedded one, a standalone one reached over TCP, or a cluster of several
// (StartCluster); storage in t.TempDir(), torn down by t.Cleanup. Never a
// fake broker.
package streamtest

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/viewcount/viewcount/internal/stream"
)

// Server starts a standalone NATS server with JetStream, reached over TCP
// (server.ClientURL) as a cluster deployment's would be, shut down at
// cleanup unless shut down before.
func Server(t testing.TB) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatalf("streamtest: %v", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("streamtest: server not ready")
	}
	t.Cleanup(srv.Shutdown)
	return srv
}

// Open starts an embedded server with the stream ensured. partitions 0 means
// the embedded default.
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
