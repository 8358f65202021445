package app

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/viewcount/viewcount/ingest/connlimit"
)

// TestEdgeWiring runs an ingest process and checks, on real connections,
// that the edge is wired: the per-address connection cap (a trusted proxy
// exempt), net/http's own errors as GIFs for the pixel, the client rate.
func TestEdgeWiring(t *testing.T) {
	cfg := Config{Listen: "127.0.0.1:0", Data: t.TempDir(), MaxConnsPerIP: 2}
	cfg.API.PublicLag, cfg.Stream.Retention = time.Second, 72*time.Hour
	cfg.Ingest.TrustedProxies, cfg.Ingest.ClientRate = []string{"127.0.0.2"}, 1
	m := NewMain(cfg,
		Roles{Ingest: true}, slog.New(slog.DiscardHandler), io.Discard, time.Now)
	if err := m.Run(t.Context()); err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", m.Addr())
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	get := func(c net.Conn, raw string) *http.Response {
		t.Helper()
		if _, err := io.WriteString(c, raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp
	}

	// Two silent connections from one address; its third is closed at once.
	dial("127.0.0.1")
	dial("127.0.0.1")
	for deadline := time.Now().Add(5 * time.Second); m.ln.(*connlimit.Listener).Stats().Open != 2; {
		if time.Now().After(deadline) {
			t.Fatalf("server holds %+v", m.ln.(*connlimit.Listener).Stats())
		}
		time.Sleep(5 * time.Millisecond)
	}
	third := dial("127.0.0.1")
	_ = third.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := third.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("third connection from a peer capped at 2: read %v, want closed", err)
	}
	// The trusted proxy holds more.
	for range 4 {
		if resp := get(dial("127.0.0.2"), "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != http.StatusOK {
			t.Fatalf("healthz through the trusted proxy: %d", resp.StatusCode)
		}
	}

	// A header net/http rejects, on the pixel: still the GIF.
	resp := get(dial("127.0.0.3"), "GET /p.gif?site=example.com&page=/ HTTP/1.1\r\nHost: x\r\nX-A: \x00\r\n\r\n")
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "image/gif" {
		t.Fatalf("malformed pixel request: %d %v", resp.StatusCode, resp.Header)
	}

	// --client-rate 1: a burst of two, then 429 (as a GIF).
	var codes []int
	for range 3 {
		resp := get(dial("127.0.0.4"), "GET /p.gif?site=example.com&page=/ HTTP/1.1\r\nHost: x\r\n\r\n")
		codes = append(codes, resp.StatusCode)
		if resp.Header.Get("Content-Type") != "image/gif" {
			t.Fatalf("pixel answered %v", resp.Header)
		}
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 || m.Metrics.RateLimited.Load() != 1 {
		t.Fatalf("statuses %v, rate limited %d; want 200 200 429, 1", codes, m.Metrics.RateLimited.Load())
	}
}

func TestEdgeFlags(t *testing.T) {
	c, err := ParseConfig("serve", nil)
	if err != nil || c.MaxConns != 0 || c.MaxConnsPerIP != 0 || c.Ingest.ClientRate != 0 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	t.Setenv("VIEWCOUNT_MAX_CONNS", "5000")
	t.Setenv("VIEWCOUNT_CLIENT_RATE", "-1")
	c, err = ParseConfig("serve", []string{"--max-conns-per-ip", "64"})
	if err != nil || c.MaxConns != 5000 || c.MaxConnsPerIP != 64 || c.Ingest.ClientRate != -1 {
		t.Fatalf("parsed %d %d %d, %v", c.MaxConns, c.MaxConnsPerIP, c.Ingest.ClientRate, err)
	}
	if lim := (&Main{cfg: c}).clientLimiter(); lim != nil {
		t.Fatal("--client-rate -1 still limits")
	}
}

func TestTrustedPrefixes(t *testing.T) {
	got, err := prefixes([]string{"10.0.0.0/8", "192.0.2.7", "2001:db8::/32", "10.1.2.3/8"})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("10.0.0.0/8")}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("prefixes = %v, want %v", got, want)
		}
	}
	if _, err := prefixes([]string{"not-an-ip"}); err == nil {
		t.Fatal("bad proxy accepted")
	}
}
