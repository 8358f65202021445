package viewcount

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// MaxEmbedOrigins bounds a site's embed allow-list (Site.EmbedOrigins).
const MaxEmbedOrigins = 10

// ErrBadEmbedOrigin is returned (wrapped) by CheckEmbedOrigins.
var ErrBadEmbedOrigin = errors.New("invalid embed origin")

// CheckEmbedOrigins checks and normalises the origins allowed to show a
// site's dashboard in a frame (its Content-Security-Policy's
// frame-ancestors): each "https://host" or "http://host", with a port
// when not the scheme's default, nothing else (no path, query, user,
// wildcard or list). The result is rebuilt from the parsed parts, lower
// case, sorted and without repeats, so it holds only [a-z0-9.:/-] and
// nothing of the input can add a directive to the header it goes into.
func CheckEmbedOrigins(in []string) ([]string, error) {
	if len(in) > MaxEmbedOrigins {
		return nil, fmt.Errorf("%w: %d origins, at most %d", ErrBadEmbedOrigin, len(in), MaxEmbedOrigins)
	}
	out := make([]string, 0, len(in))
	for _, raw := range in {
		o, err := embedOrigin(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: %.80q: %v", ErrBadEmbedOrigin, raw, err)
		}
		out = append(out, o)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func embedOrigin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil || u.Host == "":
		return "", errors.New("want an origin such as https://blog.example.com")
	case u.Scheme != "https" && u.Scheme != "http":
		return "", errors.New("want an https:// or http:// origin")
	case u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return "", errors.New("an origin has no path, query, fragment or user: scheme, host and port only")
	}
	host, err := NormaliseSite(u.Hostname())
	if err != nil || strings.Contains(u.Hostname(), ":") {
		return "", errors.New("not a host name")
	}
	origin := u.Scheme + "://" + host
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", errors.New("not a port")
		}
		if !(u.Scheme == "https" && n == 443 || u.Scheme == "http" && n == 80) {
			origin += ":" + strconv.Itoa(n)
		}
	}
	return origin, nil
}
