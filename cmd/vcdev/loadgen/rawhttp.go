package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"time"
)

// The hot loop speaks HTTP/1.1 itself over one keep-alive connection per
// worker, as wrk does: net/http's client costs several times the CPU per
// request (a goroutine pair per connection, header maps, a context per
// request), and on a shared two-core machine that CPU is taken from the
// server being measured. Only plain http is spoken; an https target goes
// through net/http (httpsConn), with the same request bytes.

// roundTripper sends one request prepared by a requestWriter and returns
// the answer's status after reading the whole answer. Not safe for
// concurrent use: each worker has its own.
type roundTripper interface {
	roundTrip(req []byte) (status int, err error)
	close()
}

// errBadResponse is an answer that is not HTTP/1.x as this client reads it.
var errBadResponse = errors.New("malformed HTTP response")

// target is where the workers send to, from the server URL.
type target struct {
	https  bool
	host   string // Host header: the URL's host[:port]
	addr   string // host:port to dial
	prefix string // the URL's path, escaped
}

func parseTarget(u *url.URL) target {
	t := target{https: u.Scheme == "https", host: u.Host, addr: u.Host, prefix: u.EscapedPath()}
	if u.Port() == "" {
		port := "80"
		if t.https {
			port = "443"
		}
		t.addr = net.JoinHostPort(u.Hostname(), port)
	}
	return t
}

// rawConn is one HTTP/1.1 connection, dialled when first needed and again
// after any error or a "Connection: close".
type rawConn struct {
	ctx     context.Context
	addr    string
	dialer  *net.Dialer
	timeout time.Duration

	nc     net.Conn // nil: not connected
	br     *bufio.Reader
	used   bool        // nc has answered a request
	cancel func() bool // stops the context watch of nc
}

// newRawConn returns a connection to addr; each request must be answered
// within timeout. When ctx ends, a request in flight fails at once.
func newRawConn(ctx context.Context, addr string, timeout time.Duration, allowRemote bool) *rawConn {
	return &rawConn{ctx: ctx, addr: addr, dialer: newDialer(min(timeout, 5*time.Second), allowRemote), timeout: timeout, br: bufio.NewReaderSize(nil, 4096)}
}

// longAgo is a deadline that has passed: setting it fails pending I/O.
var longAgo = time.Unix(1, 0)

func (c *rawConn) dial() error {
	nc, err := c.dialer.DialContext(c.ctx, "tcp", c.addr)
	if err != nil {
		return err
	}
	c.nc, c.used = nc, false
	c.br.Reset(nc)
	c.cancel = context.AfterFunc(c.ctx, func() { _ = nc.SetDeadline(longAgo) })
	return nil
}

func (c *rawConn) close() {
	if c.nc != nil {
		c.cancel()
		_ = c.nc.Close()
		c.nc = nil
	}
}

func (c *rawConn) roundTrip(req []byte) (int, error) {
	for attempt := 0; ; attempt++ {
		reused := c.nc != nil && c.used
		if c.nc == nil {
			if err := c.dial(); err != nil {
				return 0, err
			}
		}
		status, keep, started, err := c.exchange(req)
		if err == nil {
			c.used = true
			if !keep {
				c.close()
			}
			return status, nil
		}
		c.close()
		// A server may close a keep-alive connection while it is idle;
		// the request then fails before a byte of an answer. net/http
		// sends it again on a new connection, so must this client, or
		// idle timeouts would show as errors.
		if reused && !started && attempt == 0 && c.ctx.Err() == nil &&
			(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) {
			continue
		}
		return 0, err
	}
}

// exchange writes req and reads the answer. started says whether any byte
// of an answer arrived.
func (c *rawConn) exchange(req []byte) (status int, keep, started bool, err error) {
	if err := c.nc.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, false, false, err
	}
	// After the deadline is set, so a cancellation racing with it still
	// wins: the context's AfterFunc runs after Err is non-nil.
	if err := c.ctx.Err(); err != nil {
		return 0, false, false, err
	}
	if _, err := c.nc.Write(req); err != nil {
		return 0, false, false, err
	}
	return readResponse(c.br)
}

// readResponse reads one HTTP/1.x answer from br and discards its body:
// the status, whether the connection stays open after it (HTTP/1.1 unless
// "Connection: close"; HTTP/1.0 only with "Connection: keep-alive"), and
// whether any byte arrived. The body must have a Content-Length or be
// chunked (decoded and discarded); a body that runs until the connection
// closes is refused with errBadResponse, as is anything else this reader
// does not understand. 1xx answers before the final one are skipped.
func readResponse(br *bufio.Reader) (status int, keep, started bool, err error) {
	for {
		line, err := br.ReadSlice('\n')
		if len(line) == 0 && err != nil {
			return 0, false, started, err
		}
		started = true
		if err != nil {
			return 0, false, true, lineError(err, "status line")
		}
		line = trimEOL(line)
		// "HTTP/1.1 200 OK": the reason phrase may be empty or missing; a
		// status starts with 1-5, never 0.
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' ||
			(line[7] != '0' && line[7] != '1') || len(line) > 12 && line[12] != ' ' || line[9] == '0' {
			return 0, false, true, fmt.Errorf("%w: status line %.40q", errBadResponse, line)
		}
		status = 0
		for _, c := range line[9:12] {
			if c < '0' || c > '9' {
				return 0, false, true, fmt.Errorf("%w: status line %.40q", errBadResponse, line)
			}
			status = status*10 + int(c-'0')
		}
		http10 := line[7] == '0'
		keep = !http10
		length, chunked := int64(-1), false
		for {
			line, err = br.ReadSlice('\n')
			if err != nil {
				return 0, false, true, lineError(err, "header")
			}
			line = trimEOL(line)
			if len(line) == 0 {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return 0, false, true, fmt.Errorf("%w: header %.40q", errBadResponse, line)
			}
			name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
			switch {
			case equalFold(name, "content-length"):
				n, ok := parseLength(value)
				if !ok || length >= 0 && n != length {
					return 0, false, true, fmt.Errorf("%w: Content-Length %.40q", errBadResponse, value)
				}
				length = n
			case equalFold(name, "transfer-encoding"):
				if !equalFold(value, "chunked") {
					return 0, false, true, fmt.Errorf("%w: Transfer-Encoding %.40q", errBadResponse, value)
				}
				chunked = true
			case equalFold(name, "connection"):
				for tok := range bytes.SplitSeq(value, []byte(",")) {
					switch tok = bytes.TrimSpace(tok); {
					case equalFold(tok, "close"):
						keep = false
					case equalFold(tok, "keep-alive") && http10:
						keep = true
					}
				}
			}
		}
		switch {
		case status >= 100 && status < 200 && status != http.StatusSwitchingProtocols:
			continue // an interim answer; the real one follows
		case status == http.StatusNoContent || status == http.StatusNotModified:
			return status, keep, true, nil
		case chunked:
			return status, keep, true, discardChunked(br)
		case length >= 0:
			if _, err := br.Discard(int(length)); err != nil {
				return 0, false, true, lineError(err, "body")
			}
			return status, keep, true, nil
		}
		return 0, false, true, fmt.Errorf("%w: status %d without Content-Length", errBadResponse, status)
	}
}

// discardChunked reads a chunked body with its trailers.
func discardChunked(br *bufio.Reader) error {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return lineError(err, "chunk size")
		}
		line = trimEOL(line)
		if i := bytes.IndexByte(line, ';'); i >= 0 { // chunk extensions
			line = line[:i]
		}
		line = bytes.TrimSpace(line)
		var size int64
		for _, c := range line {
			var d byte
			switch {
			case '0' <= c && c <= '9':
				d = c - '0'
			case 'a' <= c && c <= 'f':
				d = c - 'a' + 10
			case 'A' <= c && c <= 'F':
				d = c - 'A' + 10
			default:
				return fmt.Errorf("%w: chunk size %.20q", errBadResponse, line)
			}
			if size = size<<4 | int64(d); size > 1<<30 {
				return fmt.Errorf("%w: chunk of %.20q bytes", errBadResponse, line)
			}
		}
		if len(line) == 0 {
			return fmt.Errorf("%w: empty chunk size", errBadResponse)
		}
		if size == 0 {
			for { // trailers, up to the blank line
				line, err := br.ReadSlice('\n')
				if err != nil {
					return lineError(err, "trailer")
				}
				if len(trimEOL(line)) == 0 {
					return nil
				}
			}
		}
		if _, err := br.Discard(int(size)); err != nil {
			return lineError(err, "chunk")
		}
		if line, err := br.ReadSlice('\n'); err != nil {
			return lineError(err, "chunk end")
		} else if len(trimEOL(line)) != 0 {
			return fmt.Errorf("%w: chunk longer than its size", errBadResponse)
		}
	}
}

// lineError names a read error inside an answer: the connection closing
// early is an unexpected EOF, a line longer than the buffer a bad answer.
func lineError(err error, what string) error {
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("%s: %w", what, io.ErrUnexpectedEOF)
	case errors.Is(err, bufio.ErrBufferFull):
		return fmt.Errorf("%w: %s too long", errBadResponse, what)
	}
	return err
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// equalFold compares ASCII case-insensitively with lower, which is lower case.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// parseLength parses a Content-Length: decimal digits only, at most 2^40.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 13 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// httpsConn sends the prepared request bytes through net/http, for https
// targets (TLS is not worth hand-rolling for a loopback load generator).
type httpsConn struct {
	ctx    context.Context
	client *http.Client
	host   string
}

func (c *httpsConn) roundTrip(req []byte) (int, error) {
	hreq, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(req)))
	if err != nil {
		return 0, fmt.Errorf("loadgen: re-reading a request: %w", err)
	}
	hreq.RequestURI = "" // a client request
	hreq.URL.Scheme, hreq.URL.Host = "https", c.host
	if _, ok := hreq.Header["User-Agent"]; !ok {
		hreq.Header.Set("User-Agent", "") // none, not Go's
	}
	resp, err := c.client.Do(hreq.WithContext(c.ctx))
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

func (c *httpsConn) close() {}
