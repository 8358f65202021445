package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestReadResponse(t *testing.T) {
	// f reads one answer from raw followed by "NEXT", so the framing is
	// checked too: the reader must stop exactly at the end of the answer.
	f := func(raw string, wantStatus int, wantKeep bool) {
		t.Helper()
		br := bufio.NewReader(strings.NewReader(raw + "NEXT"))
		status, keep, started, err := readResponse(br)
		if err != nil || status != wantStatus || keep != wantKeep || !started {
			t.Fatalf("readResponse(%q) = %d, keep %v, started %v, %v; want %d, keep %v", raw, status, keep, started, err, wantStatus, wantKeep)
		}
		if rest, _ := io.ReadAll(br); string(rest) != "NEXT" {
			t.Fatalf("readResponse(%q) left %q", raw, rest)
		}
	}
	f("HTTP/1.1 200 OK\r\nContent-Length: 43\r\nContent-Type: image/gif\r\n\r\n"+strings.Repeat("x", 43), 200, true)
	f("HTTP/1.1 202 Accepted\r\ncontent-length:14\r\n\r\n{\"accepted\":1}", 202, true)
	f("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 2\r\n\r\nno", 503, false)
	f("HTTP/1.1 200 OK\r\nConnection: Keep-Alive, CLOSE\r\nContent-Length: 0\r\n\r\n", 200, false)
	f("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", 200, false)
	f("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", 200, true)
	f("HTTP/1.1 204 No Content\r\n\r\n", 204, true)
	f("HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", 304, true)
	f("HTTP/1.1 200\nContent-Length: 2\n\nok", 200, true) // bare LF, no reason phrase
	f("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", 200, true)
	f("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1a;ext=1\r\n"+strings.Repeat("y", 26)+"\r\n0\r\nTrailer: x\r\n\r\n", 200, true)
	f("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", 200, true)

	bad := func(raw string, want error) {
		t.Helper()
		_, _, _, err := readResponse(bufio.NewReaderSize(strings.NewReader(raw), 64))
		if !errors.Is(err, want) {
			t.Fatalf("readResponse(%q) = %v, want %v", raw, err, want)
		}
	}
	bad("", io.EOF)
	bad("HTTP/1.1 200 OK\r\nContent-Le", io.ErrUnexpectedEOF)
	bad("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", io.ErrUnexpectedEOF)
	bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", io.ErrUnexpectedEOF)
	bad("hello\r\n", errBadResponse)
	bad("HTTP/2 200 OK\r\n", errBadResponse)
	bad("HTTP/1.1 2x0 OK\r\n", errBadResponse)
	bad("HTTP/1.1 099 x\r\nContent-Length: 0\r\n\r\n", errBadResponse)
	bad("HTTP/1.1 000 x\r\nContent-Length: 0\r\n\r\n", errBadResponse)
	bad("HTTP/1.1 2000 OK\r\n", errBadResponse)
	bad("HTTP/1.1 200 OK\r\n\r\n", errBadResponse) // no length: would run to the close
	bad("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", errBadResponse)
	bad("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", errBadResponse)
	bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", errBadResponse)
	bad("HTTP/1.1 200 OK\r\nno colon\r\n\r\n", errBadResponse)
	bad("HTTP/1.1 200 OK\r\nX-Long: "+strings.Repeat("a", 100)+"\r\n\r\n", errBadResponse)
	bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", errBadResponse)
	bad("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", errBadResponse)
	bad("HTTP/1.1 101 Switching Protocols\r\n\r\n", errBadResponse)
}

func FuzzReadResponse(f *testing.F) {
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	f.Add("HTTP/1.0 100 Continue\r\n\r\nHTTP/1.1 204 x\r\nConnection: close\r\n\r\n")
	f.Add("HTTP/1.1 099 x\r\nContent-Length: 0\r\n\r\n")
	f.Fuzz(func(t *testing.T, raw string) {
		status, _, _, err := readResponse(bufio.NewReaderSize(strings.NewReader(raw), 256))
		if err == nil && status < 200 && status != 101 {
			t.Fatalf("status %d from %q", status, raw)
		}
	})
}

// connCounter serves h and counts the client connections (remote
// addresses) that sent load, not the /metrics scrapes.
type connCounter struct {
	h     http.HandlerFunc
	mu    sync.Mutex
	conns map[string]bool
}

func (c *connCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/metrics" {
		http.NotFound(w, r)
		return
	}
	c.mu.Lock()
	if c.conns == nil {
		c.conns = make(map[string]bool)
	}
	c.conns[r.RemoteAddr] = true
	c.mu.Unlock()
	c.h(w, r)
}

func (c *connCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}

func TestRawClientKeepAlive(t *testing.T) {
	var served atomic.Int64
	cc := &connCounter{h: func(w http.ResponseWriter, r *http.Request) {
		// Every fifth answer closes its connection.
		if served.Add(1)%5 == 0 {
			w.Header().Set("Connection", "close")
		}
	}}
	srv := httptest.NewServer(cc)
	defer srv.Close()
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 1, Requests: 100}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK != 100 || rep.Failed != 0 || cc.count() != 20 {
		t.Fatalf("ok %d failed %d (%v) over %d connections; want 100 over 20", rep.OK, rep.Failed, rep.TransportErrors, cc.count())
	}

	cc2 := &connCounter{h: func(http.ResponseWriter, *http.Request) {}}
	srv2 := httptest.NewServer(cc2)
	defer srv2.Close()
	if rep, err = Run(context.Background(), Config{Server: srv2.URL, Connections: 4, Requests: 400}, testSource(t)); err != nil {
		t.Fatal(err)
	}
	if rep.OK != 400 || cc2.count() != 4 {
		t.Fatalf("ok %d over %d connections; want 400 over 4", rep.OK, cc2.count())
	}
}

// hijackServer answers every request with reply written on the raw
// connection, which it then closes if close is set.
func hijackServer(t *testing.T, reply string, close bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.WriteString(c, reply)
		if close {
			c.Close()
			return
		}
		// Keep serving the connection with the same reply.
		go func() {
			defer c.Close()
			for {
				if _, err := http.ReadRequest(buf.Reader); err != nil {
					return
				}
				if _, err := io.WriteString(c, reply); err != nil {
					return
				}
			}
		}()
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRawClientErrorKinds(t *testing.T) {
	f := func(srv *httptest.Server, timeout time.Duration, want string) {
		t.Helper()
		rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 2, Requests: 6, Timeout: timeout}, testSource(t))
		if err != nil {
			t.Fatal(err)
		}
		if rep.TransportErrors[want] != 6 || rep.Failed != 6 {
			t.Fatalf("errors %v, want 6 %q", rep.TransportErrors, want)
		}
	}
	f(hijackServer(t, "", true), 0, "connection closed")
	f(hijackServer(t, "HTTP/1.1 200 OK\r\n\r\nbody until the close", true), 0, "bad response")
	f(hijackServer(t, "SSH-2.0-OpenSSH_9.6\r\n", false), 0, "bad response")
	f(hijackServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort", true), 0, "connection closed")
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(300 * time.Millisecond) }))
	defer slow.Close()
	f(slow, 50*time.Millisecond, "timeout")
}

// TestRawClientResends: a server that closes each connection after one
// answer without saying so (as after an idle timeout) costs no errors: the
// request that finds the connection closed goes out again on a new one.
func TestRawClientResends(t *testing.T) {
	srv := hijackServer(t, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true)
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 1, Requests: 20}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK != 20 || rep.Failed != 0 {
		t.Fatalf("ok %d, errors %v", rep.OK, rep.TransportErrors)
	}
}

func TestRawClientChunked(t *testing.T) {
	cc := &connCounter{h: func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "part one ")
		_ = http.NewResponseController(w).Flush() // forces chunked encoding
		fmt.Fprint(w, strings.Repeat("part two ", 1000))
	}}
	srv := httptest.NewServer(cc)
	defer srv.Close()
	rep, err := Run(context.Background(), Config{Server: srv.URL, Connections: 1, Requests: 20}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK != 20 || cc.count() != 1 {
		t.Fatalf("ok %d over %d connections, errors %v", rep.OK, cc.count(), rep.TransportErrors)
	}
}

// TestRawClientCancel: a request in flight ends as soon as the run is
// cancelled, not at its timeout.
func TestRawClientCancel(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	rep, err := Run(ctx, Config{Server: srv.URL, Connections: 2, Duration: time.Hour, Timeout: time.Minute}, testSource(t))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.Failed != 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("interrupted %v, failed %d (%v), after %v", rep.Interrupted, rep.Failed, rep.TransportErrors, time.Since(start))
	}
}

// TestHTTPSConn: https targets get the same request bytes through net/http.
func TestHTTPSConn(t *testing.T) {
	var mu sync.Mutex
	var got []Hit
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hs, err := decodeHits(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, hs...)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	tg := parseTarget(must(CheckTarget(srv.URL, false)))
	if !tg.https {
		t.Fatal("not https")
	}
	c := &httpsConn{ctx: context.Background(), client: srv.Client(), host: tg.host}
	w := newRequestWriter(tg.host, tg.prefix)
	hits := newTestGenerator(t, DefaultMix(), 3).All(10)
	for i := range hits {
		raw, err := w.pixel(&hits[i])
		if err != nil {
			t.Fatal(err)
		}
		if status, err := c.roundTrip(raw); err != nil || status != http.StatusAccepted {
			t.Fatalf("%d %v", status, err)
		}
	}
	if status, err := c.roundTrip(must(w.batch(hits))); err != nil || status != http.StatusAccepted {
		t.Fatalf("batch: %d %v", status, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 20 || got[0].ID != hits[0].ID || got[19].ID != hits[9].ID {
		t.Fatalf("server got %d hits", len(got))
	}
}

func TestParseTarget(t *testing.T) {
	f := func(server string, want target) {
		t.Helper()
		if got := parseTarget(must(CheckTarget(server, true))); got != want {
			t.Fatalf("parseTarget(%q) = %+v, want %+v", server, got, want)
		}
	}
	f("http://127.0.0.1:8080", target{host: "127.0.0.1:8080", addr: "127.0.0.1:8080"})
	f("http://localhost/", target{host: "localhost", addr: "localhost:80", prefix: "/"})
	f("https://[::1]/base", target{https: true, host: "[::1]", addr: "[::1]:443", prefix: "/base"})
}

// BenchmarkRoundTrip is one worker's request against the bare Gin
// baseline in-process: the client's share of it is what loadgen costs per
// request. BenchmarkRoundTripNetHTTP is the same through net/http.
func BenchmarkRoundTrip(b *testing.B) {
	base, err := StartBaseline()
	if err != nil {
		b.Fatal(err)
	}
	defer base.Close()
	tg := parseTarget(must(CheckTarget(base.URL, false)))
	c := newRawConn(context.Background(), tg.addr, time.Minute, false)
	defer c.close()
	w := newRequestWriter(tg.host, tg.prefix)
	hits := newTestGenerator(b, DefaultMix(), 1).All(1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		raw, err := w.pixel(&hits[i%len(hits)])
		if err != nil {
			b.Fatal(err)
		}
		if status, err := c.roundTrip(raw); err != nil || status != http.StatusOK {
			b.Fatal(status, err)
		}
	}
}

func BenchmarkRoundTripNetHTTP(b *testing.B) {
	base, err := StartBaseline()
	if err != nil {
		b.Fatal(err)
	}
	defer base.Close()
	client := newClient(1, time.Minute, false)
	defer client.CloseIdleConnections()
	hits := newTestGenerator(b, DefaultMix(), 1).All(1000)
	for i := range hits {
		hits[i].Beacon = false
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		req, err := hits[i%len(hits)].Request(base.URL)
		if err != nil {
			b.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
