package redact

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAddresses(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := Addresses(in); got != want {
			t.Errorf("Addresses(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	f("read tcp 127.0.0.1:8080->127.0.0.77:33851: i/o timeout", "read tcp <address>-><address>: i/o timeout")
	f("http: panic serving 203.0.113.9:5678: boom", "http: panic serving <address>: boom")
	f("http: TLS handshake error from [2001:db8::1]:443: EOF", "http: TLS handshake error from <address>: EOF")
	f("from 2001:db8::1, then ::ffff:192.0.2.1.", "from <address>, then <address>.")
	f("fe80::1%eth0 and [::1]", "<address>%eth0 and <address>")
	f("accept tcp [::]:8080: accept4: too many open files; retrying in 5ms", "accept tcp <address>: accept4: too many open files; retrying in 5ms")
	// Not addresses: times, versions of other shapes, hex words, stack lines.
	f("at 10:16:38 v1.2.3 deadbeef cafe:babe", "at 10:16:38 v1.2.3 deadbeef cafe:babe")
	f("main.go:123 +0x1a5 e.g. a.b", "main.go:123 +0x1a5 e.g. a.b")
	f("no colons or dots", "no colons or dots")
	f("", "")
}

// TestLogLoggerRedacts runs a real server whose handler panics: net/http
// logs "http: panic serving <client address>" to its ErrorLog.
func TestLogLoggerRedacts(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	h := slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:  http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }),
		ErrorLog: NewLogLogger(h.WithAttrs([]slog.Attr{slog.String("component", "http")}), slog.LevelWarn),
	}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	const client = "127.0.0.77"
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(client)}}
	c, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Read(make([]byte, 1)) // the server closes the connection after the panic

	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		s := logs.String()
		mu.Unlock()
		if strings.Contains(s, "panic serving") {
			if strings.Contains(s, client) || !strings.Contains(s, "panic serving <address>: boom") || !strings.Contains(s, "level=WARN") {
				t.Fatalf("log line:\n%s", s)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no panic line logged:\n%s", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestNewWriter(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	in := "GET /p.gif HTTP/1.1\r\nX-Forwarded-For: 203.0.113.9, 10.0.0.1\r\n"
	if n, err := io.WriteString(w, in); err != nil || n != len(in) {
		t.Fatalf("wrote %d, %v", n, err)
	}
	if want := "GET /p.gif HTTP/1.1\r\nX-Forwarded-For: <address>, <address>\r\n"; out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}
