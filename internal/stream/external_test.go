package stream_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/internal/stream"
)

// TestExternalServerStallAndRestart runs a real nats-server as a separate
// process (NATS_URL deployments), stops it with SIGSTOP for 10 s, then
// kills and restarts it on the same store dir. The publisher and an
// ordered consumer (as a validator's) must recover by themselves, health
// must say failing while they cannot, and nothing is restarted by us.
func TestExternalServerStallAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 s stall of a real nats-server")
	}
	bin := natsServerBinary(t)
	dir := t.TempDir()
	port := freePort(t)
	url := "nats://127.0.0.1:" + strconv.Itoa(port)
	srv := startNATSServer(t, bin, dir, port)

	ctx := context.Background()
	logs := &syncWriter{w: &strings.Builder{}}
	h := &healthLog{}
	c, err := stream.Open(ctx, stream.Config{URL: url, Partitions: 1, Health: h, ProbeEvery: 200 * time.Millisecond},
		slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer func() { t.Logf("health: %s\nlog:\n%s", h, logs.String()) }()

	pub := ingest.NewPublisher(c.JS, 1, viewcount.NewMetrics(), discard())
	pctx, stopPub := context.WithCancel(ctx)
	pubDone := make(chan error, 1)
	go func() { pubDone <- pub.Run(pctx) }()
	defer func() { stopPub(); <-pubDone }()
	hit := func(id string) error {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := pub.Publish(hctx, []viewcount.Event{{Time: time.Now().UTC(), Site: "example.com", Page: "/p", ID: id, Source: viewcount.SourceBeacon}})
		return err
	}
	cons, err := c.JS.OrderedConsumer(ctx, viewcount.StreamName, jetstream.OrderedConsumerConfig{FilterSubjects: []string{viewcount.Subject(0)}})
	if err != nil {
		t.Fatal(err)
	}
	it, err := cons.Messages()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Stop()
	seen := map[string]bool{}
	consumed := func(id string) bool {
		for !seen[id] {
			nctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			m, err := it.Next(jetstream.NextContext(nctx))
			cancel()
			if err != nil {
				return false
			}
			evs, err := viewcount.DecodeEvents(nil, m.Data())
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			for _, e := range evs {
				seen[e.ID] = true
			}
		}
		return true
	}
	// recovered: a new hit is acknowledged and consumed, health healthy.
	recovered := func(after string, within time.Duration) {
		t.Helper()
		start := time.Now()
		n := 0
		waitFor(t, within, "publishing after "+after, func() bool { n++; return hit(fmt.Sprintf("%s-%d", after, n)) == nil })
		waitFor(t, within, "consuming after "+after, func() bool { return consumed(fmt.Sprintf("%s-%d", after, n)) })
		waitFor(t, within, "healthy after "+after, func() bool { p, ok := h.last(); return ok && p == "" })
		t.Logf("recovered %s after %s", time.Since(start).Round(time.Millisecond), after)
	}
	recovered("start", 5*time.Second)

	if err := srv.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The signal is delivered asynchronously: wait until the kernel has
	// the process stopped, or a hit could still be answered.
	waitFor(t, 5*time.Second, "nats-server stopped", func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", srv.Process.Pid))
		_, rest, _ := strings.Cut(string(b), ") ")
		return err != nil || strings.HasPrefix(rest, "T")
	})
	stallEnd := time.Now().Add(10 * time.Second)
	if err := hit("stalled"); err == nil {
		t.Error("a hit was acknowledged by a stopped server")
	}
	waitFor(t, 5*time.Second, "failing while stopped", func() bool { p, _ := h.last(); return p != "" })
	if err := c.Ready(ctx); err == nil {
		t.Error("Ready while the server is stopped")
	}
	time.Sleep(time.Until(stallEnd))
	if err := srv.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	recovered("SIGCONT", 10*time.Second)

	if err := srv.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = srv.Wait()
	waitFor(t, 5*time.Second, "failing while down", func() bool { p, _ := h.last(); return p != "" })
	startNATSServer(t, bin, dir, port) // stopped at cleanup
	recovered("restart", 10*time.Second)
}

// natsServerBinary builds the nats-server of go.mod's version once per
// machine (the build cache makes it quick), or takes $NATS_SERVER_BIN.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("NATS_SERVER_BIN"); bin != "" {
		return bin
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache dir for the nats-server binary: %v", err)
	}
	bin := filepath.Join(cache, "viewcount", "nats-server-test")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/nats-io/nats-server/v2").CombinedOutput()
	if err != nil {
		t.Skipf("cannot build nats-server (%v): %s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startNATSServer runs nats-server with JetStream on 127.0.0.1:port and
// waits until it accepts connections; cleanup kills it.
func startNATSServer(t *testing.T, bin, dir string, port int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, "-js", "-sd", dir, "-a", "127.0.0.1", "-p", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitFor(t, 10*time.Second, "nats-server listening", func() bool {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	return cmd
}
