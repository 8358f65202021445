package connlimit

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// serve runs an HTTP server on 127.0.0.1 behind a Listener with cfg and
// returns it; every request is answered 200 "ok".
func serve(t *testing.T, cfg Config) *Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l, err := New(ln, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:   http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }),
		ConnState: l.ConnState,
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return l
}

// dial opens a connection to l from the loopback address from (any of
// 127/8 is the host's own on Linux, so each is a distinct peer).
func dial(t *testing.T, l *Listener, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// served sends a request on c and reports whether it was answered 200.
func served(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// closedByServer reports whether the server closed c without a word (read
// ends at once with EOF or a reset rather than timing out).
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	_, err := c.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// waitOpen polls until l counts n open connections.
func waitOpen(t *testing.T, l *Listener, n int) {
	t.Helper()
	waitStats(t, l, func(s Stats) bool { return s.Open == n })
}

// waitIdle polls until l counts n idle connections: the server marks a
// connection idle just after the client has read its answer.
func waitIdle(t *testing.T, l *Listener, n int) {
	t.Helper()
	waitStats(t, l, func(s Stats) bool { return s.Idle == n })
}

func waitStats(t *testing.T, l *Listener, ok func(Stats) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok(l.Stats()) {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v", l.Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPerPeerCap(t *testing.T) {
	l := serve(t, Config{Max: 100, MaxPerPeer: 2})
	// Two connections that have not sent a request yet are not idle: the
	// peer's third is refused at once.
	a1, a2 := dial(t, l, "127.0.0.1"), dial(t, l, "127.0.0.1")
	waitOpen(t, l, 2)
	if a3 := dial(t, l, "127.0.0.1"); !closedByServer(t, a3) {
		t.Fatal("a third connection from a peer capped at 2 was kept open")
	}
	// Another peer is still served, while the first one is at its cap.
	if b := dial(t, l, "127.0.0.2"); !served(t, b) {
		t.Fatal("another peer was not served")
	}
	if s := l.Stats(); s.Refused != 1 {
		t.Fatalf("stats %+v, want 1 refused", s)
	}
	// Closing a connection frees its slot.
	_ = a1.Close()
	waitOpen(t, l, 2)
	if a4 := dial(t, l, "127.0.0.1"); !served(t, a4) {
		t.Fatal("a connection after one was closed was not served")
	}
	if !served(t, a2) {
		t.Fatal("the peer's earlier connection stopped being served")
	}
}

func TestTotalCap(t *testing.T) {
	logs := &syncBuffer{}
	l := serve(t, Config{Max: 3, MaxPerPeer: 3, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	for _, ip := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		dial(t, l, ip)
	}
	waitOpen(t, l, 3)
	for _, ip := range []string{"127.0.0.4", "127.0.0.1"} {
		if c := dial(t, l, ip); !closedByServer(t, c) {
			t.Fatalf("connection from %s over the total cap of 3 kept open", ip)
		}
	}
	if s := l.Stats(); s.Open != 3 || s.Refused != 2 {
		t.Fatalf("stats %+v, want 3 open, 2 refused", s)
	}
	// Refusals are logged once a minute at most, and never with an address.
	out := logs.String()
	if strings.Count(out, "connections refused over the caps") != 1 || !strings.Contains(out, "refused=1 open=3") || strings.Contains(out, "127.0.0.") {
		t.Fatalf("logs:\n%s", out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestExemptPeer(t *testing.T) {
	// A load balancer keeps many keep-alive connections open; its clients
	// are many people.
	l := serve(t, Config{Max: 100, MaxPerPeer: 1, Exempt: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	var conns []net.Conn
	for range 10 {
		conns = append(conns, dial(t, l, "127.0.0.1"))
	}
	for i, c := range conns {
		if !served(t, c) {
			t.Fatalf("connection %d of the exempt peer not served", i)
		}
	}
	dial(t, l, "127.0.0.2")
	if c := dial(t, l, "127.0.0.2"); !closedByServer(t, c) {
		t.Fatal("a peer that is not exempt got past its cap")
	}
}

func TestIdleGivesWay(t *testing.T) {
	l := serve(t, Config{Max: 2, MaxPerPeer: 2})
	// The peer's two connections go idle after a request each: its next
	// connection takes the place of its oldest idle one.
	a1, a2 := dial(t, l, "127.0.0.1"), dial(t, l, "127.0.0.1")
	// One after the other: which is the oldest idle one must be certain.
	if !served(t, a1) {
		t.Fatal("not served")
	}
	waitIdle(t, l, 1)
	if !served(t, a2) {
		t.Fatal("not served")
	}
	waitIdle(t, l, 2)
	a3 := dial(t, l, "127.0.0.1")
	if !served(t, a3) {
		t.Fatal("a new connection was refused while the peer had idle ones")
	}
	if !closedByServer(t, a1) {
		t.Fatal("the peer's oldest idle connection was not closed")
	}
	waitIdle(t, l, 2)
	// At the total cap, anyone's idle connection gives way to a new peer;
	// a2 is now the oldest idle one.
	b := dial(t, l, "127.0.0.2")
	if !served(t, b) {
		t.Fatal("new peer refused while idle connections were open")
	}
	if !closedByServer(t, a2) {
		t.Fatal("the oldest idle connection was not closed at the total cap")
	}
	if s := l.Stats(); s.Evicted != 2 || s.Refused != 0 {
		t.Fatalf("stats %+v, want 2 evicted", s)
	}
}

func TestDefaults(t *testing.T) {
	f := func(limit uint64, wantMax, wantPeer int) {
		t.Helper()
		if m, p := Defaults(limit); m != wantMax || p != wantPeer {
			t.Errorf("Defaults(%d) = %d, %d; want %d, %d", limit, m, p, wantMax, wantPeer)
		}
	}
	f(20000, 10000, 625)
	f(1024, 512, 32)
	f(100, 64, 16)
	f(1<<20, 65536, 4096)
}

func TestRaiseFileLimit(t *testing.T) {
	soft, hard, err := RaiseFileLimit()
	if err != nil {
		t.Fatal(err)
	}
	if soft == 0 || soft != hard {
		t.Fatalf("soft %d, hard %d: soft not raised to hard", soft, hard)
	}
}

func TestNewRejectsZeroCaps(t *testing.T) {
	for _, cfg := range []Config{{}, {Max: 1}, {MaxPerPeer: 1}, {Max: -1, MaxPerPeer: 1}} {
		if _, err := New(nil, cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}
