package app

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/ingest/connlimit"
	"github.com/viewcount/viewcount/ingest/ratelimit"
)

// edgeListener wraps the public listener: connection caps (in all and per
// peer, trusted proxies exempt from the latter), and for the ingest role the
// pixel's GIF in net/http's own error answers. connState is the server's
// ConnState hook the caps need to know idle connections.
func (m *Main) edgeListener(ln net.Listener) (_ net.Listener, connState func(net.Conn, http.ConnState), _ error) {
	// Go raises the soft limit to the hard one as the process starts; doing
	// it again here makes it explicit and gives the numbers to log.
	soft, hard, err := connlimit.RaiseFileLimit()
	if err != nil {
		m.logger.Warn("file limit not raised", "err", err)
	}
	maxConns, perPeer := connlimit.Defaults(soft)
	if m.cfg.MaxConns > 0 {
		maxConns = m.cfg.MaxConns
	}
	if m.cfg.MaxConnsPerIP > 0 {
		perPeer = m.cfg.MaxConnsPerIP
	}
	exempt, err := prefixes(m.cfg.Ingest.TrustedProxies)
	if err != nil {
		return nil, nil, fmt.Errorf("--trusted-proxies: %w", err)
	}
	if m.roles.Ingest {
		ln = ingest.PixelListener(ln)
	}
	lim, err := connlimit.New(ln, connlimit.Config{Max: maxConns, MaxPerPeer: perPeer, Exempt: exempt, Logger: m.logger})
	if err != nil {
		return nil, nil, err
	}
	m.logger.Info("connection limits", "component", "http", "file_limit_soft", soft, "file_limit_hard", hard,
		"max_conns", maxConns, "max_conns_per_ip", perPeer)
	return lim, lim.ConnState, nil
}

// clientLimiter is ingest's per-address rate limit from --client-rate; nil
// when it is off.
func (m *Main) clientLimiter() ingest.Limiter {
	rate := m.cfg.Ingest.ClientRate
	switch {
	case rate < 0:
		return nil
	case rate == 0:
		rate = ratelimit.DefaultRate
	}
	// Two seconds' worth at once: a NAT's traffic comes in bursts (pages
	// load together after a train leaves a tunnel), not evenly.
	// time.Now, not m.now: the limit runs on elapsed time (the monotonic
	// clock), whatever clock stamps the events.
	return ratelimit.New(float64(rate), 2*rate, ratelimit.DefaultSlots, time.Now)
}

// prefixes reads trusted proxies as gin does: CIDRs or single addresses.
func prefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, err
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}
