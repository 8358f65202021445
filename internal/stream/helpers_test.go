package stream_test

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// healthLog records every report of the stream part, as viewcount.Metrics
// would receive it.
type healthLog struct {
	mu     sync.Mutex
	states []string // "" healthy, else the problem
}

func (h *healthLog) SetHealth(part string, err error) {
	if part != "stream" {
		return
	}
	s := ""
	if err != nil {
		s = err.Error()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.states); n == 0 || h.states[n-1] != s {
		h.states = append(h.states, s)
	}
}

// last is the latest report; ok false before any.
func (h *healthLog) last() (problem string, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.states) == 0 {
		return "", false
	}
	return h.states[len(h.states)-1], true
}

func (h *healthLog) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.states, " | ")
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not %s within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// syncWriter lets a log handler write from the server's goroutines while
// the test reads.
type syncWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}
