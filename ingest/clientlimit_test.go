package ingest

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest/ratelimit"
)

// TestClientRateLimit: a flood from one address gets 429 GIFs after its
// burst, before any work (nothing published, nothing decoded), while another
// address behind the same trusted proxy is served.
func TestClientRateLimit(t *testing.T) {
	var now time.Time // the limiter's clock stands still: exact counts
	lim := ratelimit.New(10, 5, 1024, func() time.Time { return now })
	s := newEdgeServer(t, Config{Limiter: lim}, []string{"127.0.0.1/32"}, nil)
	c := s.dial(t, "127.0.0.1")
	br := bufio.NewReader(c)
	pixel := func(xff, query string) (*http.Response, []byte) {
		t.Helper()
		return roundTrip(t, c, br, "GET", "GET /p.gif?"+query+" HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: "+xff+"\r\n\r\n")
	}
	const flood, other = "198.51.100.7", "203.0.113.9"
	for i := range 5 {
		resp, body := pixel(flood, "site=example.com&page=/"+strconv.Itoa(i))
		wantGIF(t, resp, body, http.StatusOK, true)
	}
	for range 20 {
		// Malformed on purpose: a limited request is never even parsed,
		// so it is neither a 400 nor counted as a bad request.
		resp, body := pixel(flood, "site=not+a+domain")
		wantGIF(t, resp, body, http.StatusTooManyRequests, true)
	}
	resp, body := pixel(other, "site=example.com&page=/other")
	wantGIF(t, resp, body, http.StatusOK, true)

	// The beacon answers 429 in JSON before reading its body.
	beacon := `{"site":"example.com","page":"/b"}`
	resp, body = roundTrip(t, c, br, "POST", "POST /v1/events HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: "+flood+
		"\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(beacon))+"\r\n\r\n"+beacon)
	var msg struct{ Error string }
	if resp.StatusCode != http.StatusTooManyRequests || json.Unmarshal(body, &msg) != nil || msg.Error == "" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("beacon over the rate: %d %v %s", resp.StatusCode, resp.Header, body)
	}

	if n := len(s.pub.events()); n != 6 {
		t.Fatalf("%d events published, want the 5 of the burst and the other address's 1", n)
	}
	if got, bad := s.metrics.RateLimited.Load(), s.metrics.BadRequests.Load(); got != 21 || bad != 0 {
		t.Fatalf("rate limited %d (want 21), bad requests %d (want 0)", got, bad)
	}
	var text strings.Builder
	if _, err := s.metrics.WriteTo(&text); err != nil || !strings.Contains(text.String(), "\nviewcount_rate_limited_total 21\n") {
		t.Fatalf("metrics (%v):\n%s", err, text.String())
	}
	// Time refills the flooder's allowance: one request per 100 ms.
	now = now.Add(100 * time.Millisecond)
	resp, body = pixel(flood, "site=example.com&page=/later")
	wantGIF(t, resp, body, http.StatusOK, true)
	if logs := s.logs.String(); strings.Contains(logs, flood) || strings.Contains(logs, other) {
		t.Fatalf("client address in the logs:\n%s", logs)
	}
}

// TestBeaconReadErrorNoAddress: a body that cannot be read is reported
// with its cause and without either end's address, to the client and in
// the log (net.OpError's text names both).
func TestBeaconReadErrorNoAddress(t *testing.T) {
	s := newEdgeServer(t, Config{}, nil, func(srv *http.Server) { srv.ReadTimeout = 300 * time.Millisecond })
	const client = "127.0.0.77"
	head := "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"site\":"
	f := func(send func(net.Conn), want string) {
		t.Helper()
		c := s.dial(t, client)
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		send(c)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusBadRequest || string(body) != `{"error":"reading body: `+want+`"}` {
			t.Fatalf("got %d %s, want 400 reading body: %s", resp.StatusCode, body, want)
		}
	}
	f(func(net.Conn) {}, "timed out") // the rest of the body never comes
	f(func(c net.Conn) {
		// The client stops sending (half-close) short of Content-Length.
		if err := c.(*net.TCPConn).CloseWrite(); err != nil {
			t.Fatal(err)
		}
	}, "unexpected EOF")
	logs := s.logs.String()
	if !strings.Contains(logs, "reading body: timed out") {
		t.Fatalf("read failure not logged:\n%s", logs)
	}
	if strings.Contains(logs, client) || strings.Contains(logs, "127.0.0.1") {
		t.Fatalf("an address in the logs:\n%s", logs)
	}
}

func TestReadFailure(t *testing.T) {
	f := func(err error, want string) {
		t.Helper()
		if got := readFailure(err); got != want {
			t.Errorf("readFailure(%v) = %q, want %q", err, got, want)
		}
	}
	addr := &net.TCPAddr{IP: net.ParseIP("192.0.2.44"), Port: 33851}
	f(&net.OpError{Op: "read", Net: "tcp", Addr: addr, Source: addr, Err: io.ErrClosedPipe}, "io: read/write on closed pipe")
	f(io.ErrUnexpectedEOF, "unexpected EOF")
	f(&net.OpError{Op: "read", Net: "tcp", Addr: addr, Source: addr, Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "connection reset")
	f(&net.OpError{Op: "read", Net: "tcp", Addr: addr, Source: addr, Err: os.ErrDeadlineExceeded}, "timed out")
	f(&net.OpError{Op: "read", Net: "tcp", Addr: addr, Err: &timeoutError{}}, "i/o timeout")
	f(&wrapped{"stream from 192.0.2.44:33851 broke"}, "stream from <address> broke")
}

type timeoutError struct{}

func (*timeoutError) Error() string   { return "i/o timeout" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return false }

type wrapped struct{ s string }

func (w *wrapped) Error() string { return w.s }

// BenchmarkPixelLimited is BenchmarkPixel with the per-client rate limit
// on, as serve runs it (the rate is set beyond reach, so every hit takes
// the allowed path the limit adds to).
func BenchmarkPixelLimited(b *testing.B) {
	gin.SetMode(gin.TestMode)
	e := gin.New()
	if err := e.SetTrustedProxies(nil); err != nil { // as newTestServer
		b.Fatal(err)
	}
	lim := ratelimit.New(1e9, 1e9, ratelimit.DefaultSlots, time.Now)
	New(Config{PublishTimeout: time.Second, Limiter: lim}, nopPublisher{}, fixedSalt(b, testSalt), viewcount.NewMetrics(), discard(), time.Now).Routes(e)
	req := httptest.NewRequest(http.MethodGet,
		"/p.gif?site=example.com&page=%2Fblog%2F2026%2Fsome-post%2F%3Futm_source%3Dnews&ref=https%3A%2F%2Fwww.google.com%2F", nil)
	req.RemoteAddr = testIP + ":40000"
	req.Header.Set("User-Agent", chromeUA)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}
