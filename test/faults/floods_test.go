//go:build faults

package faults

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// A flood comes from its own loopback address (Linux routes all of
// 127/8 to lo), not from 127.0.0.1, the load's trusted proxy: a per-address
// connection cap must stop the flood, and a trusted proxy is exempt from it.
const (
	exhaustFrom = "127.0.0.2"
	floodFrom   = "127.0.0.3"
)

func dialFrom(ctx context.Context, from, addr string) (net.Conn, error) {
	d := net.Dialer{Timeout: time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	return d.DialContext(ctx, "tcp", addr)
}

// keepAlive opens connections from one address, each making one request
// and then staying idle (as a keep-alive client does), until max are open
// or ten failures in a row say the server takes no more (a server out of
// descriptors leaves connections in the kernel's backlog unanswered, so
// each failure costs a timeout). It returns the open
// connections, and how many attempts failed.
func keepAlive(ctx context.Context, from, addr string, max int) ([]net.Conn, int) {
	var conns []net.Conn
	failed, inRow := 0, 0
	for len(conns) < max && inRow < 10 && ctx.Err() == nil {
		conn, err := dialFrom(ctx, from, addr)
		if err == nil {
			err = oneRequest(conn, addr)
		}
		if err != nil {
			if conn != nil {
				conn.Close()
			}
			failed++
			inRow++
			continue
		}
		inRow = 0
		conns = append(conns, conn)
	}
	return conns, failed
}

func oneRequest(conn net.Conn, addr string) error {
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: " + addr + "\r\n\r\n")); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return conn.SetDeadline(time.Time{})
}

// flood keeps idle connections (connected, nothing sent) and slow ones
// (a request's headers trickled a byte a second) open from one address
// until ctx ends, reopening what the server closes. It reports how many
// connections it opened in all.
func flood(ctx context.Context, from, addr string, idle, slow int) int {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		opened int
	)
	run := func(slowly bool) {
		defer wg.Done()
		for ctx.Err() == nil {
			conn, err := dialFrom(ctx, from, addr)
			if err != nil {
				sleepCtx(ctx, 200*time.Millisecond)
				continue
			}
			mu.Lock()
			opened++
			mu.Unlock()
			hold(ctx, conn, slowly)
			conn.Close()
			// A server that closes at once must not turn the flood into a
			// busy loop on this shared machine.
			sleepCtx(ctx, 100*time.Millisecond)
		}
	}
	for i := range idle + slow {
		wg.Add(1)
		go run(i >= idle)
	}
	wg.Wait()
	return opened
}

// hold keeps conn until ctx ends or the server closes it.
func hold(ctx context.Context, conn net.Conn, slowly bool) {
	closed := make(chan struct{})
	go func() {
		// A read returns when the server closes the connection (or answers
		// a timeout with 408 and closes).
		_, _ = conn.Read(make([]byte, 512))
		close(closed)
	}()
	if !slowly {
		select {
		case <-ctx.Done():
		case <-closed:
		}
		return
	}
	req := []byte("GET /p.gif?site=flood.example&page=/slow HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow-" + strconv.Itoa(int(time.Now().UnixNano()%1000)) + ": ")
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 0; ; i++ {
		b := byte('a')
		if i < len(req) {
			b = req[i]
		}
		if _, err := conn.Write([]byte{b}); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-closed:
			return
		case <-tick.C:
		}
	}
}
