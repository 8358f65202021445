package ingest

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/viewcount/viewcount"
)

// edgeServer is the ingest routes on a real HTTP server on 127.0.0.1, its
// listener wrapped as in production, for requests written byte for byte.
type edgeServer struct {
	addr    string
	pub     *recorder
	metrics *viewcount.Metrics
	logs    *lockedBuffer
}

func newEdgeServer(t *testing.T, cfg Config, trusted []string, srvCfg func(*http.Server)) *edgeServer {
	t.Helper()
	gin.SetMode(gin.TestMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true // as httpserve.NewEngine sets it
	if err := e.SetTrustedProxies(trusted); err != nil {
		t.Fatal(err)
	}
	s := &edgeServer{pub: newRecorder(t), metrics: viewcount.NewMetrics(), logs: &lockedBuffer{}}
	logger := slog.New(slog.NewTextHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if cfg.PublishTimeout == 0 {
		cfg.PublishTimeout = 5 * time.Second
	}
	New(cfg, s.pub, fixedSalt(t, testSalt), s.metrics, logger, time.Now).Routes(e)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A small header limit makes "headers too large" cheap to send; net/http
	// answers it the same way at any size.
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 4 << 10}
	if srvCfg != nil {
		srvCfg(srv)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(PixelListener(ln)) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	s.addr = ln.Addr().String()
	return s
}

// lockedBuffer holds logs the server's goroutines write while a test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dial connects from the loopback address from (each of 127/8 is a
// distinct peer on Linux).
func (s *edgeServer) dial(t *testing.T, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// roundTrip writes raw on c and reads one answer (method decides whether
// it has a body).
func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader, method, raw string) (*http.Response, []byte) {
	t.Helper()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%.40q: %v", raw, err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%.40q: body: %v", raw, err)
	}
	return resp, body
}

func wantGIF(t *testing.T, resp *http.Response, body []byte, status int, withBody bool) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("Content-Type") != "image/gif" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("got %d %v %.80q, want %d image/gif no-store", resp.StatusCode, resp.Header, body, status)
	}
	if resp.ContentLength != 43 {
		t.Fatalf("Content-Length %d, want 43", resp.ContentLength)
	}
	if withBody && !bytes.Equal(body, pixelGIF) || !withBody && len(body) != 0 {
		t.Fatalf("body %d bytes %.20q", len(body), body)
	}
}

const pixelQuery = "/p.gif?site=example.com&page=/a"

// TestPixelAlwaysGIF sends, on real connections, what made the pixel answer
// something other than a GIF: HEAD, a trailing slash, headers net/http
// rejects before any handler.
func TestPixelAlwaysGIF(t *testing.T) {
	s := newEdgeServer(t, Config{}, nil, nil)
	nul := "\r\nHost: x\r\nX-A: a\x00b\r\n\r\n"
	big := "\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 16<<10) + "\r\n\r\n"
	for _, tc := range []struct {
		name, method, raw string
		status            int
		events            int // events in the stream after the request
	}{
		{"HEAD", "HEAD", "HEAD " + pixelQuery + " HTTP/1.1\r\nHost: x\r\n\r\n", 200, 0},
		{"trailing slash", "GET", "GET /p.gif/?site=example.com&page=/a HTTP/1.1\r\nHost: x\r\n\r\n", 200, 1},
		{"trailing slashes", "GET", "GET /p.gif//?site=example.com&page=/a HTTP/1.1\r\nHost: x\r\n\r\n", 200, 2},
		{"trailing slash, bad hit", "GET", "GET /p.gif/?site=example.com HTTP/1.1\r\nHost: x\r\n\r\n", 400, 2},
		{"below the pixel", "GET", "GET /p.gif/x HTTP/1.1\r\nHost: x\r\n\r\n", 404, 2},
		{"POST", "POST", "POST " + pixelQuery + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 405, 2},
		// Rejected by net/http itself, before any handler.
		{"NUL in a header", "GET", "GET " + pixelQuery + " HTTP/1.1" + nul, 400, 2},
		{"NUL in a header, HEAD", "HEAD", "HEAD " + pixelQuery + " HTTP/1.1" + nul, 400, 2},
		{"headers too large", "GET", "GET " + pixelQuery + " HTTP/1.1" + big, 431, 2},
		{"headers too large, slash", "GET", "GET /p.gif/ HTTP/1.1" + big, 431, 2},
		{"unsupported transfer encoding", "GET", "GET " + pixelQuery + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := s.dial(t, "127.0.0.1")
			resp, body := roundTrip(t, c, bufio.NewReader(c), tc.method, tc.raw)
			wantGIF(t, resp, body, tc.status, tc.method != "HEAD")
			if n := len(s.pub.events()); n != tc.events {
				t.Fatalf("%d events in the stream, want %d", n, tc.events)
			}
		})
	}

	// Other paths keep net/http's plain answers.
	one := func(raw string) *http.Response {
		t.Helper()
		c := s.dial(t, "127.0.0.1")
		resp, _ := roundTrip(t, c, bufio.NewReader(c), "GET", raw)
		return resp
	}
	if resp := one("GET /vc.js HTTP/1.1" + nul); resp.StatusCode != 400 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("/vc.js with a NUL header: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := one("GET /p.gifx HTTP/1.1" + big); resp.StatusCode != 431 || resp.Header.Get("Content-Type") == "image/gif" {
		t.Errorf("/p.gifx with large headers: %d %v", resp.StatusCode, resp.Header)
	}
}

// TestPixelAlwaysGIFKeepAlive: the request a rejection answers is found on a
// connection that already served others, a beacon's body included, and
// when the client writes a byte at a time.
func TestPixelAlwaysGIFKeepAlive(t *testing.T) {
	s := newEdgeServer(t, Config{}, nil, nil)
	c := s.dial(t, "127.0.0.1")
	br := bufio.NewReader(c)
	if resp, _ := roundTrip(t, c, br, "GET", "GET /vc.js HTTP/1.1\r\nHost: x\r\n\r\n"); resp.StatusCode != http.StatusOK {
		t.Fatalf("script: %d", resp.StatusCode)
	}
	resp, body := roundTrip(t, c, br, "GET", "GET "+pixelQuery+" HTTP/1.1\r\nHost: x\r\n\r\n")
	wantGIF(t, resp, body, http.StatusOK, true)
	beacon := `{"site":"example.com","page":"/b"}`
	resp, _ = roundTrip(t, c, br, "POST", "POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: "+
		strconv.Itoa(len(beacon))+"\r\n\r\n"+beacon)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("beacon: %d", resp.StatusCode)
	}
	resp, body = roundTrip(t, c, br, "GET", "GET "+pixelQuery+" HTTP/1.1\r\nHost: x\r\nX-A: \x00\r\n\r\n")
	wantGIF(t, resp, body, http.StatusBadRequest, true)

	// A byte at a time: the request line and the headers' end arrive split.
	c = s.dial(t, "127.0.0.1")
	br = bufio.NewReader(c)
	for _, req := range []string{"GET /vc.js HTTP/1.1\r\nHost: x\r\n\r\n", "GET " + pixelQuery + " HTTP/1.1\r\nHost: x\r\nX-A: \x00\r\n\r\n"} {
		for i := range len(req) {
			if _, err := c.Write([]byte{req[i]}); err != nil {
				t.Fatal(err)
			}
			if i%7 == 0 {
				time.Sleep(time.Millisecond) // let the server read what came so far
			}
		}
		if resp, err := http.ReadResponse(br, nil); err != nil {
			t.Fatal(err)
		} else {
			body, _ = io.ReadAll(resp.Body)
			if strings.Contains(req, "p.gif") {
				wantGIF(t, resp, body, http.StatusBadRequest, true)
			} else if resp.StatusCode != http.StatusOK {
				t.Fatalf("script byte by byte: %d", resp.StatusCode)
			}
		}
	}
}

// TestPixelLineTracking checks the request-line tracking on reads split at
// every awkward place, without a network.
func TestPixelLineTracking(t *testing.T) {
	f := func(wantPixel, wantHead bool, chunks ...string) {
		t.Helper()
		c := &pixelConn{}
		c.begin()
		for _, ch := range chunks {
			if ch == "<answer>" {
				c.answered = true
				continue
			}
			c.saw([]byte(ch))
		}
		if c.pixel != wantPixel || c.head != wantHead {
			t.Errorf("%q: pixel %v head %v, want %v %v", chunks, c.pixel, c.head, wantPixel, wantHead)
		}
	}
	f(true, false, "GET /p.gif?x HTTP/1.1\r\n")
	f(true, false, "G", "ET /p.", "gif", "/ HTTP/1.1\r\n")
	f(true, true, "HEAD /p.gif HTTP/1.1\r\n")
	f(false, false, "GET /p.gifx HTTP/1.1\r\n")
	f(false, false, "GET /vc.js HTTP/1.1\r\n")
	f(false, false, "POST /p.gif HTTP/1.1\r\n")
	// The request whose headers just ended keeps its verdict until the next
	// request line decides: net/http may still reject it.
	f(true, false, "GET /p.gif HTTP/1.1\r\nX-A: \x00\r\n\r\n")
	f(true, true, "HEAD /p.gif HTTP/1.1\r\n\r\nGET /p", "<answer>")
	// The next request after the end of headers, in one read or split.
	f(false, false, "GET /p.gif HTTP/1.1\r\nHost: x\r\n\r\nGET /vc.js HTTP/1.1\r\n")
	f(true, false, "GET /vc.js HTTP/1.1\r\nHost: x\r\n\r\nGET /p.gif HTTP/1.1\r\n")
	f(true, false, "GET /vc.js HTTP/1.1\r\nHost: x\r\n\r", "\n", "GET /p.gif HTTP/1.1\r\n")
	f(true, false, "GET /vc.js HTTP/1.1\r\nHost: x\r", "\n", "\r", "\n", "GET /p.gif HTTP/1.1\r\n")
	f(false, false, "GET /p.gif HTTP/1.1\r\nHost: x\r", "\n", "\r", "\n", "GET /vc.js HTTP/1.1\r\n")
	// After a body, the first read after the answer starts the next request.
	f(true, false, "POST /v1/events HTTP/1.1\r\nContent-Length: 2\r\n\r\n", "{}", "<answer>", "GET /p.gif HTTP/1.1\r\n")
	f(false, false, "GET /p.gif HTTP/1.1\r\n\r\n", "<answer>", "GET /vc.js HTTP/1.1\r\n")
	// A read already under way when the answer was written is not cut.
	f(true, false, "GET /vc.js HTTP/1.1\r\n\r\nG", "<answer>", "ET /p.gif HTTP/1.1\r\n")
}

func TestCannedStatus(t *testing.T) {
	f := func(write string, want int) {
		t.Helper()
		if got := cannedStatus([]byte(write)); got != want {
			t.Errorf("%.50q: %d, want %d", write, got, want)
		}
	}
	f("HTTP/1.1 431 Request Header Fields Too Large"+cannedHeaders+"431 Request Header Fields Too Large", 431)
	f("HTTP/1.1 400 Bad Request: missing required Host header"+cannedHeaders+"400 Bad Request: missing required Host header", 400)
	f("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nDate: x\r\n\r\nbad", 0)
	f("HTTP/1.1 200 OK\r\nContent-Type: image/gif\r\n\r\n", 0)
	f("HTTP/1.1 100 Continue\r\n\r\n", 0)
	f("GIF89a", 0)
}
