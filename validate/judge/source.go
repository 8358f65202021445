package judge

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/viewcount/viewcount"
)

// defaultReferrerSources groups well-known referring hosts under one name
// (the file documents its format).
//
//go:embed lists/referrer-sources.txt
var defaultReferrerSources string

// Direct is the referrer source of a view without an external referrer.
const Direct = "(direct)"

// refCacheSize bounds the memoised referrer hosts, in two generations as
// the user-agent memo: sites see a long tail of referring hosts, but the
// ones that repeat are few.
const refCacheSize = 1 << 13

// sources names the source of a referring host: a listed name, or the host
// itself. Not safe for concurrent use; each Rules owns one.
type sources struct {
	exact     map[string]string // host → name; also matches subdomains
	wild      map[string]string // label → name, for "label.*" entries
	kinds     map[string]string // name → the kind its section says (sourceKindHeadings)
	cur, prev map[string]string // memo: host → source
}

func newSources() (*sources, error) {
	s := &sources{exact: map[string]string{}, wild: map[string]string{}, kinds: map[string]string{}, cur: map[string]string{}, prev: map[string]string{}}
	if err := s.parse(strings.NewReader(defaultReferrerSources), "lists/referrer-sources.txt"); err != nil {
		return nil, err // the embedded list is checked by TestDefaultReferrerSources
	}
	return s, nil
}

func (s *sources) parse(r io.Reader, name string) error {
	sc := bufio.NewScanner(r)
	kind := ""
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if k, ok := sourceKindHeadings[text]; ok {
			kind = k
		}
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		src, hosts, ok := strings.Cut(text, ":")
		src = strings.TrimSpace(src)
		if !ok || src == "" || strings.TrimSpace(hosts) == "" {
			return fmt.Errorf("validate: %s:%d: want \"Name: host host ...\"", name, line)
		}
		for _, h := range strings.Fields(hosts) {
			m, key := s.exact, h
			if label, ok := strings.CutSuffix(h, ".*"); ok {
				m, key = s.wild, label
			}
			n, err := normaliseHost(key)
			if err != nil || strings.HasPrefix(n, "www.") {
				return fmt.Errorf("validate: %s:%d: %q: want a host name or label.*, without www", name, line, h)
			}
			if prior, dup := m[n]; dup {
				return fmt.Errorf("validate: %s:%d: %q is listed for %s already", name, line, h, prior)
			}
			m[n] = src
		}
		if kind != "" {
			s.kinds[src] = kind
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("validate: %s: %w", name, err)
	}
	return nil
}

// source is the grouped name of host (lowercase, without "www."), or host
// itself when it is not a listed one. Memoised per host.
func (s *sources) source(host string) string {
	if v, ok := s.cur[host]; ok {
		return v
	}
	v, ok := s.prev[host]
	if !ok {
		// Clone: host points into an event the memo must not pin. The
		// host's own string is the answer for unlisted hosts, so the
		// clone serves as key and value.
		host = strings.Clone(host)
		v = s.lookup(host)
		if v == "" {
			v = host
		}
	}
	if len(s.cur) >= refCacheSize/2 {
		s.prev, s.cur = s.cur, make(map[string]string, refCacheSize/2)
	}
	s.cur[host] = v
	return v
}

// lookup walks from host to its parents; at each level a listed host
// wins over a "label.*" entry, and a deeper level over a shallower one.
func (s *sources) lookup(host string) string {
	for h := host; h != ""; {
		if v, ok := s.exact[h]; ok {
			return v
		}
		label, rest, ok := strings.Cut(h, ".")
		if !ok {
			return ""
		}
		if v, ok := s.wild[label]; ok {
			if ps, icann := publicsuffix.PublicSuffix(h); icann && ps == rest {
				return v
			}
		}
		h = rest
	}
	return ""
}

// referrerDims are the referrer's dimensions of e: its host without "www."
// and its source. Internal referrers (the event's own site, with or without
// "www.", or a subdomain of it) are no source, as in Plausible: a visitor
// moving between pages of the site is not a visit from somewhere; so is a
// referrer without a host.
func (s *sources) referrerDims(e *viewcount.Event) (host, source string) {
	if e.Referrer == "" {
		return "", Direct
	}
	host = strings.TrimPrefix(hostOf(e.Referrer), "www.")
	site := strings.TrimPrefix(e.Site, "www.")
	if host == "" || host == site || (len(host) > len(site) && strings.HasSuffix(host, site) && host[len(host)-len(site)-1] == '.') {
		return "", Direct
	}
	return host, s.source(host)
}

// sourceKindHeadings are the sections of the referrer-sources list, by
// the comment that opens each, and the kind of source each lists: what
// the stats API's channels group sources by (docs/stats-api.md,
// "Channels").
var sourceKindHeadings = map[string]string{
	"# Search engines": "search", "# Social networks": "social", "# Webmail": "email", "# AI assistants": "ai",
}

// SourceKinds maps each source the referrer-sources list names to its
// kind: "search", "social", "email" or "ai", from the section it is
// listed in. A name listed outside those sections is an error
// (TestSourceKinds keeps the list whole).
func SourceKinds() (map[string]string, error) {
	s, err := newSources()
	if err != nil {
		return nil, err
	}
	for _, m := range []map[string]string{s.exact, s.wild} {
		for _, name := range m {
			if s.kinds[name] == "" {
				return nil, fmt.Errorf("validate: lists/referrer-sources.txt: %q is in no section of %d known", name, len(sourceKindHeadings))
			}
		}
	}
	return s.kinds, nil
}
