package stream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// probeStream takes the supervisor's writes: a real store write on the same
// server and disk as the events, kept tiny by its limits, never read.
var probeStream = jetstream.StreamConfig{
	Name:        "VIEWCOUNT_PROBE",
	Description: "writability probes of the stream supervisor",
	Subjects:    []string{probeSubject},
	Storage:     jetstream.FileStorage,
	Retention:   jetstream.LimitsPolicy,
	MaxAge:      time.Minute,
	MaxMsgs:     16,
	MaxBytes:    1 << 20,
	Discard:     jetstream.DiscardOld,
}

const (
	probeSubject = "viewcount.probe"
	// A write takes microseconds; a second means the store is stuck.
	probeTimeout = 2 * time.Second
	// Restarts back off while the fault persists (a restart that finds the
	// disk full again only repeats itself).
	minRestartWait = 5 * time.Second
	maxRestartWait = time.Minute
)

// supervisor proves every few seconds that the stream takes writes, reports
// it (health part "stream", Conn.Ready) and, for the embedded server only,
// heals a server left unwritable by a fault whose cause has cleared.
//
// What a transient fault leaves behind in nats-server v2.15 (single
// server): a failed block write or file open (ENOSPC, EMFILE) sets the
// stream's write error (fileStore.werr, stream.werr), never cleared; every
// later write to that stream fails and, in processJetStreamMsg's default
// case, gets no answer, so publishers and KV puts time out for as long as
// the server runs. Only permission errors disable JetStream outright. The
// cure is recreating the streams from their files: a restart of the
// embedded server on the same store dir, once a test file can be written
// there again (so the cause is gone). With an external cluster the
// supervisor only reports: its servers are the operator's.
type supervisor struct {
	c      *Conn
	health HealthReporter
	logger *slog.Logger
	every  time.Duration
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error // last verdict; nil = writable

	failingSince time.Time
	restartWait  time.Duration
	nextRestart  time.Time
	seq          uint64
}

func startSupervisor(c *Conn, health HealthReporter, every time.Duration) *supervisor {
	ctx, cancel := context.WithCancel(context.Background())
	s := &supervisor{c: c, health: health, logger: c.logger, every: every, cancel: cancel,
		done: make(chan struct{}), restartWait: minRestartWait}
	s.check(ctx)
	go s.run(ctx)
	return s
}

func (s *supervisor) run(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.check(ctx)
		}
	}
}

func (s *supervisor) stop() {
	s.cancel()
	<-s.done
}

func (s *supervisor) state() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

func (s *supervisor) check(ctx context.Context) {
	err := s.probe(ctx)
	var stuck error
	if s.c.emb != nil {
		// The probe stream's block file is open already, so its write can
		// succeed while no other stream can open one: try a new file too.
		if derr := dirWritable(s.c.emb.dir, 0); derr != nil && err == nil {
			err = fmt.Errorf("stream: store dir: %w", derr)
		}
		stuck = s.c.emb.stuck()
		if err == nil {
			err = stuck
		}
	}
	now := time.Now()
	if err == nil {
		if !s.failingSince.IsZero() {
			s.logger.Info("stream writable again", "after", now.Sub(s.failingSince).Round(time.Millisecond))
		}
		s.failingSince, s.restartWait, s.nextRestart = time.Time{}, minRestartWait, time.Time{}
		s.report(nil)
		return
	}
	if s.failingSince.IsZero() {
		s.failingSince = now
		s.logger.Error("stream not writable", "err", err)
	}
	// Only a fault known to be sticky is restarted away: a probe that is
	// merely slow (an overloaded server, a long replay) is reported and
	// left alone, since a restart would add to the load, not cure it.
	if s.c.emb == nil || stuck == nil {
		s.report(err)
		return
	}
	if derr := dirWritable(s.c.emb.dir, 256<<10); derr != nil {
		// The cause is still there: a restart would only fail the same way.
		s.report(fmt.Errorf("%w (store dir: %v)", err, derr))
		return
	}
	s.report(err)
	if now.Before(s.nextRestart) {
		return
	}
	s.nextRestart = now.Add(s.restartWait)
	s.restartWait = min(2*s.restartWait, maxRestartWait)
	s.logger.Warn("restarting the embedded NATS server to clear a write fault", "err", err)
	if rerr := s.c.emb.restart(); rerr != nil {
		s.logger.Error("embedded NATS server restart failed", "err", rerr)
		s.report(fmt.Errorf("%w; restart failed: %v", err, rerr))
		return
	}
	s.logger.Info("embedded NATS server restarted")
	// Verdict at the next tick: clients need a moment to reconnect.
}

// probe writes one small message and waits for the store's ack.
func (s *supervisor) probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	s.seq++
	if _, err := s.c.JS.Publish(ctx, probeSubject, []byte(strconv.FormatUint(s.seq, 10))); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("stream: probe write unanswered after %s", probeTimeout)
		}
		return fmt.Errorf("stream: probe write: %w", err)
	}
	return nil
}

func (s *supervisor) report(err error) {
	s.mu.Lock()
	s.err = err
	s.mu.Unlock()
	if s.health != nil {
		s.health.SetHealth("stream", err)
	}
}

// stuck names a fault the server keeps until restarted: JetStream disabled,
// or a stream holding a write error (reported by healthz; the texts are
// nats-server's).
func (e *embedded) stuck() error {
	srv := e.current()
	if srv == nil {
		return errRestarting
	}
	if !srv.JetStreamEnabled() {
		return errors.New("stream: JetStream disabled on the embedded server")
	}
	h := srv.Healthz(&server.HealthzOptions{Details: true})
	for _, he := range h.Errors {
		if strings.Contains(he.Error, "write error") {
			return fmt.Errorf("stream: %s", he.Error)
		}
	}
	return nil
}

// dirWritable proves the store dir takes a new file and size bytes of
// data: what a stream write needs that EMFILE or ENOSPC took away.
func dirWritable(dir string, size int) error {
	return pathless(tryWrite(dir, size))
}

// pathless drops the test file's random name, which would make every
// report a new problem.
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s a test file: %w", pe.Op, pe.Err)
	}
	return err
}

func tryWrite(dir string, size int) error {
	f, err := os.CreateTemp(dir, ".writable-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if size > 0 {
		_, err = f.Write(make([]byte, size))
		if serr := f.Sync(); err == nil {
			err = serr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
