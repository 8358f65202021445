package viewcount

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
)

// A site's hostnames are the page hosts its views may come from: a browser
// view whose page (as the request showed it: see Event.Origin) is on
// another host is ForeignOrigin. An entry is a host name ("example.com"),
// a wildcard for every subdomain of one ("*.example.com", which does not
// match example.com itself), or "*" for any host (a widget embedded on
// other people's pages). Without a list of its own a site has
// DefaultHostnames.
const (
	// MaxHostnames bounds one site's list: a registry entry is small, and
	// checking a view walks the list.
	MaxHostnames = 32
	// AnyHost is the entry that allows every host.
	AnyHost = "*"
)

// ErrBadHostname is returned (wrapped) by CheckHostnames.
var ErrBadHostname = errors.New("invalid hostname")

// DefaultHostnames is the list of a site that has none of its own: its
// domain, without a leading "www.", and every subdomain of that
// ("www.example.com" → example.com, *.example.com), so the www and bare
// names of one site, and its blog. and shop. hosts, all count.
func DefaultHostnames(site string) []string {
	base := strings.TrimPrefix(site, "www.")
	if base == "" || !strings.Contains(base, ".") {
		base = site
	}
	return []string{base, "*." + base}
}

// CheckHostnames validates and normalises a site's hostnames as an
// operator writes them: each entry is lower-cased and its trailing dot
// dropped, duplicates are dropped, order is kept. An entry is accepted
// only if it is "*", or a public host name (CheckRegistrable's rules: no
// IP address, no single label, no localhost, no port, scheme or path),
// optionally after "*.". At least one entry and at most MaxHostnames.
// The error wraps ErrBadHostname and names the entry, worded for the
// client.
func CheckHostnames(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: at least one hostname is required", ErrBadHostname)
	}
	if len(in) > MaxHostnames {
		return nil, fmt.Errorf("%w: %d hostnames, at most %d", ErrBadHostname, len(in), MaxHostnames)
	}
	out := make([]string, 0, len(in))
	for i, raw := range in {
		h, err := checkHostname(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: [%d] %q: %s", ErrBadHostname, i, clip(raw, 64), err.Error())
		}
		if !containsString(out, h) {
			out = append(out, h)
		}
	}
	return out, nil
}

func checkHostname(raw string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(raw))
	if h == AnyHost {
		return h, nil
	}
	name, wild := strings.CutPrefix(h, "*.")
	if strings.ContainsAny(name, "*") {
		return "", errors.New(`a wildcard is "*." before a domain, or "*" alone`)
	}
	// Refused before CheckRegistrable, which would drop a port silently.
	if strings.ContainsAny(name, ":/@?#[] ") {
		return "", errors.New("a host name only: no scheme, port or path")
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return "", errors.New("an IP address, not a host name")
	}
	n, err := CheckRegistrable(name)
	if err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), ErrBadSite.Error()+": "))
	}
	if wild {
		return "*." + n, nil
	}
	return n, nil
}

// HostAllowed reports whether host (lower case, without port, as
// Event.Origin holds it) matches an entry of list (as CheckHostnames
// returns it). It allocates nothing.
func HostAllowed(list []string, host string) bool {
	for _, h := range list {
		switch {
		case h == AnyHost, h == host:
			return true
		case len(h) > 2 && h[0] == '*' && h[1] == '.':
			// "*.example.com" matches x.example.com: host ends with
			// ".example.com" and has something before it.
			if suffix := h[1:]; len(host) > len(suffix) && host[len(host)-len(suffix):] == suffix {
				return true
			}
		}
	}
	return false
}

// Hostnames is one version of a site's list and when it took effect (the
// registry's clock, as for a registration). A site's views are judged by
// the list in force when each was received, so a change applies from
// then on and a replay of the stream judges every view as it was judged.
type Hostnames struct {
	Since time.Time `json:"since"`
	Hosts []string  `json:"hosts"`
}

// HostLookup says which page hosts a site's views may come from. The site
// registry (internal/stream.Sites) implements it beside Registrations, in
// memory: validators consult it for every view that names its page.
type HostLookup interface {
	// AllowsHost reports whether a view of site received at t from a page
	// on host may count: the site's hostnames in force at t allow host.
	// An unregistered site allows nothing (the view is UnknownSite anyway).
	AllowsHost(site, host string, t time.Time) bool
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// clip cuts s to at most n bytes, for quoting a client's input back.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
