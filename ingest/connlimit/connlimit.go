// Package connlimit caps the connections an HTTP server holds open: in all,
// and per peer address, so one client cannot take the file descriptors the
// rest of the process (the stream's and the store's files) needs.
//
// It sees only the socket's peer address; it must never log or return that
// address (the process's logs never hold a raw client IP).
package connlimit

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// Config sets the caps. Both must be positive; Defaults derives them from the
// process's file limit.
type Config struct {
	Max        int            // connections open at once, in all
	MaxPerPeer int            // connections open at once from one peer address (IPv6: one /64)
	Exempt     []netip.Prefix // peers not held to MaxPerPeer: trusted proxies carry many clients
	Logger     *slog.Logger   // refusals are logged here, at most one line a minute; nil = not logged
}

// Defaults are the caps for a process allowed fileLimit open files: half of
// them for connections, the other half left to the stream's and the store's
// files (chDB keeps a few per table part, the embedded NATS server a few per
// stream and bucket); at most 65536 connections, which already cost about a
// gigabyte of buffers and goroutine stacks. One peer gets a sixteenth of the
// total: far beyond what a browser opens (six per host), and a NAT of many
// people loses nothing to it either, since a peer at its cap first gives up
// its own idle keep-alive connections (see Listener).
func Defaults(fileLimit uint64) (maxConns, maxPerPeer int) {
	maxConns = int(min(max(fileLimit/2, 64), 65536))
	return maxConns, max(maxConns/16, 16)
}

// Listener is a net.Listener that refuses connections over the caps. A new
// connection over a cap is admitted only if an idle keep-alive connection can
// make room (the peer's own oldest idle one for the per-peer cap, anyone's
// oldest for the total): idle connections are the cheapest to lose, since an
// HTTP client opens a new one when it finds its idle one closed. Otherwise
// the new connection is closed at once. Slow connections that never finish
// their request are not evicted here: the server's ReadHeaderTimeout ends
// them.
//
// The http.Server must report connection states to ConnState; without it no
// connection is known to be idle and every refusal is a new connection's.
type Listener struct {
	net.Listener
	cfg Config

	mu       sync.Mutex
	open     int
	idle     int
	peers    map[netip.Addr]*peer // only peers with an open connection: bounded by Max
	idleList list                 // every idle connection, oldest first
	refused  uint64
	evicted  uint64
	lastWarn time.Time // of the last refusal logged
	warned   uint64    // refused at lastWarn
}

type peer struct {
	open int
	idle list // this peer's idle connections, oldest first
}

// New wraps ln.
func New(ln net.Listener, cfg Config) (*Listener, error) {
	if cfg.Max <= 0 || cfg.MaxPerPeer <= 0 {
		return nil, fmt.Errorf("connlimit: caps must be positive (max %d, per peer %d)", cfg.Max, cfg.MaxPerPeer)
	}
	return &Listener{Listener: ln, cfg: cfg, peers: make(map[netip.Addr]*peer)}, nil
}

// Stats are the listener's counts.
type Stats struct {
	Open    int    // connections open now
	Idle    int    // of them, idle between requests
	Refused uint64 // connections closed at once, over a cap with no idle one to give up
	Evicted uint64 // idle connections closed to make room
}

// Stats returns the current counts.
func (l *Listener) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{Open: l.open, Idle: l.idle, Refused: l.refused, Evicted: l.evicted}
}

// Accept returns the next connection within the caps; those over them are
// closed here and never reach the server.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, exempt := l.key(c.RemoteAddr())
		lc, victims := l.admit(c, key, exempt)
		// Closed outside the lock: a close can block on the socket.
		for _, v := range victims {
			_ = v.Conn.Close()
		}
		if lc != nil {
			return lc, nil
		}
		_ = c.Close()
		l.warnRefused()
	}
}

// warnRefused logs refusals, at most once a minute, so that a flood (or
// caps too low for the traffic) shows without a line per connection.
func (l *Listener) warnRefused() {
	if l.cfg.Logger == nil {
		return
	}
	l.mu.Lock()
	now := time.Now()
	if now.Sub(l.lastWarn) < time.Minute {
		l.mu.Unlock()
		return
	}
	refused := l.refused - l.warned
	l.lastWarn, l.warned = now, l.refused
	open, idle := l.open, l.idle
	l.mu.Unlock()
	l.cfg.Logger.Warn("connections refused over the caps", "component", "http", "refused", refused,
		"open", open, "idle", idle, "max_conns", l.cfg.Max, "max_conns_per_ip", l.cfg.MaxPerPeer)
}

// key is the peer a connection is counted against: its address, or for
// IPv6 its /64, the block one subscriber is usually given whole.
func (l *Listener) key(a net.Addr) (netip.Addr, bool) {
	var addr netip.Addr
	if ta, ok := a.(*net.TCPAddr); ok {
		addr, _ = netip.AddrFromSlice(ta.IP)
	} else if ap, err := netip.ParseAddrPort(a.String()); err == nil {
		addr = ap.Addr()
	}
	addr = addr.Unmap().WithZone("")
	for _, p := range l.cfg.Exempt {
		if p.Contains(addr) {
			return addr, true
		}
	}
	if addr.Is6() {
		addr = netip.PrefixFrom(addr, 64).Masked().Addr()
	}
	return addr, false
}

// admit counts c in or returns nil, with the idle connections to close to
// make room (already uncounted).
func (l *Listener) admit(c net.Conn, key netip.Addr, exempt bool) (*conn, []*conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.peers[key]
	if p == nil {
		p = &peer{}
	}
	var victims []*conn
	if !exempt && p.open >= l.cfg.MaxPerPeer {
		v := p.idle.oldest()
		if v == nil {
			l.refused++
			return nil, nil
		}
		l.release(v)
		victims = append(victims, v)
	}
	if l.open >= l.cfg.Max {
		v := l.idleList.oldest()
		if v == nil {
			l.refused++
			return nil, victims
		}
		l.release(v)
		victims = append(victims, v)
	}
	if p.open == 0 {
		l.peers[key] = p
	}
	p.open++
	l.open++
	l.evicted += uint64(len(victims))
	return &conn{Conn: c, l: l, peer: p, key: key}, victims
}

// release uncounts c; it runs once per connection, under l.mu.
func (l *Listener) release(c *conn) {
	if c.released {
		return
	}
	c.released = true
	if c.idle {
		l.idleList.remove(c, byAll)
		c.peer.idle.remove(c, byPeer)
		c.idle = false
		l.idle--
	}
	l.open--
	if c.peer.open--; c.peer.open == 0 {
		delete(l.peers, c.key)
	}
}

// ConnState is the http.Server's ConnState hook: it tells the listener which
// connections are idle between requests.
func (l *Listener) ConnState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok || c.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.released {
		return
	}
	switch idle := state == http.StateIdle; {
	case idle && !c.idle:
		l.idleList.push(c, byAll)
		c.peer.idle.push(c, byPeer)
		c.idle = true
		l.idle++
	case !idle && c.idle:
		l.idleList.remove(c, byAll)
		c.peer.idle.remove(c, byPeer)
		c.idle = false
		l.idle--
	}
}

// conn is an admitted connection; closing it frees its slot.
type conn struct {
	net.Conn
	l    *Listener
	peer *peer
	key  netip.Addr

	// Guarded by l.mu.
	released bool
	idle     bool
	links    [2]links // in l.idleList (byAll) and peer.idle (byPeer)
}

// Close frees the slot (once) and closes the socket.
func (c *conn) Close() error {
	c.l.mu.Lock()
	c.l.release(c)
	c.l.mu.Unlock()
	return c.Conn.Close()
}

// CloseWrite half-closes the socket, as net/http does after a final error
// answer so the client reads it before the connection resets.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// Unwrap returns the wrapped connection.
func (c *conn) Unwrap() net.Conn { return c.Conn }
