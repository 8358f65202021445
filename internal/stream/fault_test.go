package stream_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/internal/stream"
)

// After descriptor exhaustion or a full disk the embedded JetStream must
// not keep refusing writes until the process restarts (docs/operations.md,
// Health and self-healing). Each test injects the fault for real, clears
// its cause and requires that writes recover by themselves within
// recoverWithin, that health went failing then healthy, and that nothing
// acknowledged was lost.

const (
	faultChildEnv = "VIEWCOUNT_STREAM_FAULT_CHILD"
	recoverWithin = 15 * time.Second
)

// TestDescriptorExhaustionHeals runs in a child process, because lowering
// RLIMIT_NOFILE and taking every descriptor would starve the other tests.
func TestDescriptorExhaustionHeals(t *testing.T) {
	if os.Getenv(faultChildEnv) != "emfile" {
		t.Parallel() // the child mostly waits on NATS's own retry timers
		runFaultChild(t, "TestDescriptorExhaustionHeals", "emfile")
		return
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	var held []*os.File
	faultScenario(t, t.TempDir(), func() {
		for {
			f, err := os.Open(os.DevNull)
			if err != nil {
				if !errors.Is(err, syscall.EMFILE) {
					t.Fatalf("exhausting descriptors: %v", err)
				}
				return
			}
			held = append(held, f)
		}
	}, func() {
		for _, f := range held {
			f.Close()
		}
	})
}

// TestFullDiskHeals mounts a small tmpfs on the data dir, fills it, and
// frees it again. It needs root (CI runs as root).
func TestFullDiskHeals(t *testing.T) {
	if os.Getenv(faultChildEnv) != "enospc" {
		if os.Geteuid() != 0 {
			t.Skip("mounting a tmpfs to fill needs root; CI runs this as root")
		}
		t.Parallel() // as TestDescriptorExhaustionHeals
		runFaultChild(t, "TestFullDiskHeals", "enospc")
		return
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64m"); err != nil {
		t.Skipf("cannot mount a tmpfs (%v): a container without CAP_SYS_ADMIN", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	filler := filepath.Join(dir, "filler")
	faultScenario(t, dir, func() {
		f, err := os.Create(filler)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 1<<20)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("filling the disk: %v", err)
				}
				return
			}
		}
	}, func() {
		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
	})
}

// runFaultChild re-executes this test binary for one test with the fault
// mode set, and fails with the child's output if the child fails.
func runFaultChild(t *testing.T, test, mode string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), faultChildEnv+"="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "--- SKIP") {
		if err == nil {
			t.Skipf("child skipped:\n%s", out)
		}
		t.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	t.Logf("child %s:\n%s", mode, out)
}

// faultScenario opens the embedded stream in dir, injects a fault, checks
// that writes fail and health says so, clears the fault and checks that the
// stream heals by itself: writes answered again, health healthy, an ordered
// consumer made before the fault (as a validator's) receiving new events,
// and every acknowledged message still in the stream.
func faultScenario(t *testing.T, dir string, inject, clear func()) {
	ctx := context.Background()
	subj := viewcount.Subject(0)
	// A first server stores one event and stops: the second one recovers
	// the stream with no block file open, as after any restart or an idle
	// spell (nats-server closes idle block files after 30 s), so the next
	// write must open a file.
	first, err := stream.Open(ctx, stream.Config{DataDir: dir, Partitions: 1}, discard())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.JS.Publish(ctx, subj, []byte("before")); err != nil {
		t.Fatal(err)
	}
	first.Close()
	acked := 1

	logs := &syncWriter{w: &strings.Builder{}}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	h := &healthLog{}
	c, err := stream.Open(ctx, stream.Config{DataDir: dir, Partitions: 1, Health: h, ProbeEvery: 200 * time.Millisecond}, logger)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	defer func() { t.Logf("health: %s\nlog:\n%s", h, logs.String()) }()

	cons, err := c.JS.OrderedConsumer(ctx, viewcount.StreamName, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subj}})
	if err != nil {
		t.Fatal(err)
	}
	it, err := cons.Messages()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Stop()
	sites, err := stream.OpenSites(ctx, c, nil) // a KV watcher, as validators and the API hold
	if err != nil {
		t.Fatal(err)
	}
	defer sites.Close()
	// The ingest tier's publisher, made before the fault like the server's.
	pub := ingest.NewPublisher(c.JS, 1, viewcount.NewMetrics(), logger)
	pctx, stopPub := context.WithCancel(ctx)
	pubDone := make(chan error, 1)
	go func() { pubDone <- pub.Run(pctx) }()
	defer func() { stopPub(); <-pubDone }()
	hit := func(id string) error {
		hctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := pub.Publish(hctx, []viewcount.Event{{Time: time.Now().UTC(), Site: "example.com", Page: "/p", ID: id, Source: viewcount.SourceBeacon}})
		if err == nil {
			acked++
		}
		return err
	}
	publish := func(data []byte) error {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := c.JS.Publish(pctx, subj, data)
		if err == nil {
			acked++
		}
		return err
	}

	inject()
	var werr error
	for i := 0; i < 40 && werr == nil; i++ {
		werr = publish(make([]byte, 64<<10))
	}
	if werr == nil {
		t.Fatal("writes still succeed under the fault")
	}
	t.Logf("write under the fault: %v", werr)
	if err := hit("during"); err == nil {
		t.Error("the publisher acknowledged a hit under the fault")
	}
	waitFor(t, 10*time.Second, "reported failing", func() bool { p, _ := h.last(); return p != "" })
	if err := c.Ready(ctx); err == nil {
		t.Error("Ready says ready while writes fail")
	}

	clear()
	start := time.Now()
	waitFor(t, recoverWithin, "writable again", func() bool { return publish([]byte("after")) == nil })
	t.Logf("writes recovered %s after the fault cleared", time.Since(start).Round(time.Millisecond))
	waitFor(t, 5*time.Second, "reported healthy", func() bool { p, ok := h.last(); return ok && p == "" })
	if err := c.Ready(ctx); err != nil {
		t.Errorf("Ready after recovery: %v", err)
	}
	waitFor(t, recoverWithin, "publisher acknowledging again", func() bool { return hit("after") == nil })
	kv, err := c.KV(ctx, viewcount.BucketRollup)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "probe", []byte("x")); err != nil {
		t.Errorf("progress bucket write after recovery: %v", err)
	}

	// The consumer made before the fault resumes by itself and sees the
	// write made after it.
	deadline := time.Now().Add(recoverWithin)
	for seen := false; !seen; {
		if time.Now().After(deadline) {
			t.Fatal("the ordered consumer never delivered the write made after recovery")
		}
		nctx, cancel := context.WithTimeout(ctx, time.Second)
		m, err := it.Next(jetstream.NextContext(nctx))
		cancel()
		switch {
		case err == nil:
			seen = string(m.Data()) == "after"
		case !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout):
			// The validator's loop treats any other error as the
			// partition's end and restarts it after a back-off.
			t.Errorf("ordered consumer: %v", err)
		}
	}
	t.Logf("ordered consumer delivering %s after the fault cleared", time.Since(start).Round(time.Millisecond))
	// The registry's watcher made before the fault follows again: nats.go
	// resets its ordered push consumer after 2 missed heartbeats of 5 s,
	// so within about 20 s of the restart.
	other, err := stream.OpenSites(ctx, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, _, err := other.Add(ctx, "after.example.com"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 25*time.Second, "the sites watcher following", func() bool { return sites.Known("after.example.com") })
	t.Logf("sites watcher following %s after the fault cleared", time.Since(start).Round(time.Millisecond))

	s, err := c.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs < uint64(acked) {
		t.Errorf("stream holds %d messages, %d were acknowledged", info.State.Msgs, acked)
	}
	natsErr := false
	for _, line := range strings.Split(logs.String(), "\n") {
		natsErr = natsErr || strings.Contains(line, "level=ERROR") && strings.Contains(line, "component=nats")
	}
	if !natsErr {
		t.Error("the NATS server's own errors are not in our log")
	}
	fmt.Fprintf(os.Stderr, "acked=%d stored=%d\n", acked, info.State.Msgs)
}
