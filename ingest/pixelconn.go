package ingest

import (
	"bytes"
	"net"
	"net/http"
	"strconv"
	"sync"
)

// PixelListener wraps ln so that the answers net/http writes by itself,
// before any handler runs, are GIFs too when the request was for the pixel:
// headers too large (431), a malformed header such as one holding a NUL
// (400), an unsupported transfer encoding (501). An <img> then never shows a
// broken image, whatever it sent.
//
// net/http writes those answers straight to the connection, in one write
// and always in the same form, so the connection rewrites them: it follows
// the request lines it reads (the start of the connection, the byte after a
// blank line that ends a request's headers, the first byte after an answer)
// and remembers whether the request being read is for the pixel. With HTTP
// pipelining (which browsers never do) that guess can be wrong; a wrong
// guess only changes which of the two error bodies is sent.
func PixelListener(ln net.Listener) net.Listener { return pixelListener{ln} }

type pixelListener struct{ net.Listener }

func (l pixelListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	pc := &pixelConn{Conn: c}
	pc.begin()
	return pc, nil
}

// pixelLine is the longest request-line prefix that decides: "HEAD /p.gif"
// and the byte after the path.
const pixelLine = len("HEAD /p.gif?")

type pixelConn struct {
	net.Conn

	mu       sync.Mutex // Read (net/http's background read too) and Write run on different goroutines
	deciding bool       // line holds the start of a request line, not yet classified
	line     [pixelLine]byte
	n        int
	pixel    bool // the request being read is for the pixel path
	head     bool // ... by HEAD
	answered bool // an answer was written since the last read
	crlf     int  // bytes of "\r\n\r\n" that the data read so far ends with
}

// begin notes that the next byte read starts a request line. The request
// before keeps its verdict until the new line decides: net/http may still
// reject the request whose headers just ended.
func (c *pixelConn) begin() { c.deciding, c.n = true, 0 }

func (c *pixelConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		c.saw(p[:n])
		c.mu.Unlock()
	}
	return n, err
}

var headersEnd = []byte("\r\n\r\n")

// saw follows the request lines in b, the next bytes read.
func (c *pixelConn) saw(b []byte) {
	if c.answered {
		c.answered = false
		// A request line is being read unless one was already found (the
		// answer followed a request's headers, not its body).
		if !c.deciding {
			c.begin()
		}
	}
	if c.crlf > 0 {
		// The headers' end may come split over reads, a byte at a time
		// from a slow client.
		need := headersEnd[c.crlf:]
		m := min(len(need), len(b))
		switch {
		case !bytes.Equal(b[:m], need[:m]):
			c.crlf = 0
		case m < len(need):
			c.crlf += m
			return
		default:
			b = b[m:]
			c.crlf = 0
			c.begin()
		}
	}
	for {
		if c.deciding {
			k := copy(c.line[c.n:], b)
			c.n += k
			c.classify()
		}
		i := bytes.Index(b, headersEnd)
		if i < 0 {
			break
		}
		b = b[i+len(headersEnd):]
		c.begin()
		if len(b) == 0 {
			return
		}
	}
	for k := min(len(b), len(headersEnd)-1); k > 0; k-- {
		if bytes.Equal(b[len(b)-k:], headersEnd[:k]) {
			c.crlf = k
			return
		}
	}
}

// classify decides, once enough of the line is read, whether it asks for
// the pixel: "GET /p.gif" or "HEAD /p.gif", then ' ', '?' or '/'.
func (c *pixelConn) classify() {
	line := c.line[:c.n]
	for _, m := range [...]string{"GET /p.gif", "HEAD /p.gif"} {
		switch {
		case len(line) <= len(m):
			if m[:len(line)] == string(line) {
				return // not enough read yet
			}
		case string(line[:len(m)]) == m:
			if sep := line[len(m)]; sep == ' ' || sep == '?' || sep == '/' {
				c.deciding, c.pixel, c.head = false, true, m[0] == 'H'
				return
			}
		}
	}
	c.deciding, c.pixel = false, false
}

// cannedHeaders follow the status line of every answer net/http writes
// itself (server.go, conn.serve); no handler's answer has exactly these.
const cannedHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

func (c *pixelConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	pixel, head := c.pixel, c.head
	c.answered = true
	c.mu.Unlock()
	if pixel {
		if code := cannedStatus(p); code != 0 {
			if _, err := c.Conn.Write(gifAnswer(code, head)); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return c.Conn.Write(p)
}

// cannedStatus is the status of an answer net/http wrote itself, 0 for any
// other write.
func cannedStatus(p []byte) int {
	if len(p) < len("HTTP/1.1 400 ") || string(p[:9]) != "HTTP/1.1 " || p[12] != ' ' && p[12] != '\r' {
		return 0
	}
	i := bytes.Index(p, []byte("\r\n"))
	if i < 0 || !bytes.HasPrefix(p[i:], []byte(cannedHeaders)) {
		return 0
	}
	code, err := strconv.Atoi(string(p[9:12]))
	if err != nil || code < 400 || code > 599 {
		return 0
	}
	return code
}

// gifAnswer is an answer with status code and the pixel, closing the
// connection as net/http's own does.
func gifAnswer(code int, head bool) []byte {
	b := make([]byte, 0, 160+len(pixelGIF))
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(code)...)
	b = append(b, "\r\nContent-Type: image/gif\r\nCache-Control: no-store\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(pixelGIF)), 10)
	b = append(b, "\r\nConnection: close\r\n\r\n"...)
	if !head {
		b = append(b, pixelGIF...)
	}
	return b
}

// CloseWrite half-closes the socket: net/http does so after its 431 answer
// so that the client reads it before the connection resets.
func (c *pixelConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
