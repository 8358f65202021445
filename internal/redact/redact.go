// Package redact removes IP addresses from text bound for a log line or a
// client: the raw address of a client must never appear in either, and
// text from the standard library (net.OpError, net/http's ErrorLog lines)
// names both ends of a connection.
package redact

import (
	"io"
	"log"
	"log/slog"
	"net/netip"
	"strings"
)

// Placeholder replaces each address (with its port, if any).
const Placeholder = "<address>"

// Addresses returns s with every IPv4 and IPv6 address (bare, with a port,
// or bracketed) replaced by Placeholder. A candidate is replaced only if it
// parses as an address, so times ("10:16:38"), versions and hex words stay.
func Addresses(s string) string {
	if !strings.ContainsAny(s, ".:") {
		return s
	}
	var b strings.Builder
	last := 0 // s[:last] is in b, or nothing has been replaced yet
	for i := 0; i < len(s); {
		if !addrByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && addrByte(s[j]) {
			j++
		}
		if n := addrLen(s[i:j]); n > 0 {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteString(Placeholder)
			last = i + n
		}
		i = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// addrByte reports whether c can be part of a written address.
func addrByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' || c == '.' || c == ':' || c == '[' || c == ']'
}

// addrLen is the length of the address at the start of tok, 0 if none. A
// trailing ':' or '.' may be punctuation ("serving 1.2.3.4:5678: panic").
func addrLen(tok string) int {
	for t := tok; t != ""; t = t[:len(t)-1] {
		if isAddr(t) {
			return len(t)
		}
		if c := t[len(t)-1]; c != ':' && c != '.' {
			return 0
		}
	}
	return 0
}

func isAddr(t string) bool {
	if !strings.ContainsAny(t, ".:") {
		return false
	}
	if _, err := netip.ParseAddrPort(t); err == nil {
		return true
	}
	if len(t) > 2 && t[0] == '[' && t[len(t)-1] == ']' {
		t = t[1 : len(t)-1]
	}
	_, err := netip.ParseAddr(t)
	return err == nil
}

// NewLogLogger is slog.NewLogLogger with every line's addresses redacted:
// for http.Server.ErrorLog, whose lines name clients ("http: panic serving
// 1.2.3.4:5678", "http: TLS handshake error from …").
func NewLogLogger(h slog.Handler, level slog.Level) *log.Logger {
	return log.New(NewWriter(slog.NewLogLogger(h, level).Writer()), "", 0)
}

// NewWriter returns a writer that passes each write on to w with its
// addresses redacted: for libraries that log to an io.Writer (gin's
// recovery dumps a request's headers, X-Forwarded-For included). Each write
// must hold whole lines, as a log.Logger's do.
func NewWriter(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (w writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, Addresses(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
