package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrRemote is returned for a server that is not on a loopback address
// when remote targets are not allowed.
var ErrRemote = errors.New("loadgen: refusing to send load to a non-loopback address (pass --allow-remote to override)")

// CheckTarget validates a server URL: http or https, with a host that is a
// loopback address or "localhost", unless allowRemote.
func CheckTarget(server string, allowRemote bool) (*url.URL, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, fmt.Errorf("loadgen: server URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("loadgen: server URL %q: scheme must be http or https", server)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("loadgen: server URL %q: no host", server)
	}
	if allowRemote {
		return u, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if !a.Unmap().IsLoopback() {
			return nil, fmt.Errorf("%w: %s", ErrRemote, host)
		}
		return u, nil
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h != "localhost" && !strings.HasSuffix(h, ".localhost") {
		return nil, fmt.Errorf("%w: %s", ErrRemote, host)
	}
	return u, nil
}

// loopbackOnly is a dialer Control refusing every non-loopback peer: the
// guard holds even if a name resolves somewhere unexpected.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("%w: %s", ErrRemote, address)
	}
	return nil
}

// newDialer dials with keep-alive and, unless allowRemote, to loopback
// peers only.
func newDialer(timeout time.Duration, allowRemote bool) *net.Dialer {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowRemote {
		d.Control = loopbackOnly
	}
	return d
}

// newClient is a net/http keep-alive client with at most conns connections
// to a host, for what is not the hot loop (registering the site, /metrics)
// and for https targets. It never uses a proxy from the environment and never follows
// redirects: every request goes to the server it names.
func newClient(conns int, timeout time.Duration, allowRemote bool) *http.Client {
	d := newDialer(5*time.Second, allowRemote)
	tr := &http.Transport{
		DialContext:         d.DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// RegisterSite registers site with the server's admin API; a site that is
// already registered (409) is fine.
func RegisterSite(ctx context.Context, server, adminToken, site string, allowRemote bool) error {
	if _, err := CheckTarget(server, allowRemote); err != nil {
		return err
	}
	client := newClient(1, 30*time.Second, allowRemote)
	defer client.CloseIdleConnections()
	body, _ := json.Marshal(map[string]string{"domain": site})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(server, "/")+"/v1/admin/sites", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("loadgen: register site: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("loadgen: register site: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch resp.StatusCode {
	case http.StatusCreated, http.StatusConflict:
		return nil
	}
	return fmt.Errorf("loadgen: register site %s: %s: %s", site, resp.Status, bytes.TrimSpace(msg))
}

// transportErrorKind names a failed request's error with a small, fixed
// vocabulary so reports stay short.
func transportErrorKind(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, ErrRemote):
		return "refused: not loopback"
	case errors.Is(err, errBadResponse):
		return "bad response"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EMFILE):
		return "out of local ports or files"
	}
	return "other"
}
