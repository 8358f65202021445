package judge

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"os"
	"strings"
)

// defaultSpamReferrers is the built-in referrer spam list.
//
//go:embed lists/referrer-spam.txt
var defaultSpamReferrers string

// spamReferrers matches a referrer's host, and each of its parent domains,
// against a set of hosts: x.semalt.com matches semalt.com. The set is
// immutable after construction, so the matcher needs no lock.
type spamReferrers map[string]struct{}

func newSpamReferrers(extra []string, replace bool) (spamReferrers, error) {
	s := spamReferrers{}
	if !replace {
		hosts, err := parseHosts(strings.NewReader(defaultSpamReferrers), "lists/referrer-spam.txt")
		if err != nil {
			return nil, err // a bad embedded list is a build bug; TestDefaultSpamReferrers guards it
		}
		for _, h := range hosts {
			s[h] = struct{}{}
		}
	}
	for i, h := range extra {
		n, err := normaliseHost(h)
		if err != nil {
			return nil, fmt.Errorf("validate: spam referrer %d %q: %w", i+1, h, err)
		}
		s[n] = struct{}{}
	}
	return s, nil
}

// match returns the listed host or parent domain of referrer ("scheme://host/path", as ingest stores it;
// a bare "host/path" is accepted too), "" when none is listed. It
// allocates nothing for a lowercase host, which is what ingest sends.
func (s spamReferrers) match(referrer string) string {
	if referrer == "" || len(s) == 0 {
		return ""
	}
	host := hostOf(referrer)
	for host != "" {
		if _, ok := s[host]; ok {
			return host
		}
		i := strings.IndexByte(host, '.')
		if i < 0 {
			return ""
		}
		host = host[i+1:]
	}
	return ""
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// normaliseHost lowercases a listed host and refuses what cannot be one:
// an empty entry, or one with a scheme, path, port or spaces (a list entry
// "https://semalt.com/" would otherwise silently match nothing).
func normaliseHost(h string) (string, error) {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	if h == "" {
		return "", fmt.Errorf("empty host")
	}
	if strings.ContainsAny(h, "/:@?# \t") {
		return "", fmt.Errorf("want a bare host name such as semalt.com")
	}
	return h, nil
}

// LoadHosts reads a host list such as a referrer spam list: one host per
// line (a host also matches its subdomains), lines starting with '#' are
// comments, blank lines and surrounding spaces are ignored, case does not
// matter. The error for a bad entry names the file and line.
func LoadHosts(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("validate: host list: %w", err)
	}
	defer f.Close()
	return parseHosts(f, path)
}

func parseHosts(r io.Reader, name string) ([]string, error) {
	var hosts []string
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		h := strings.TrimSpace(sc.Text())
		if h == "" || strings.HasPrefix(h, "#") {
			continue
		}
		n, err := normaliseHost(h)
		if err != nil {
			return nil, fmt.Errorf("validate: host list: %s:%d: %q: %w", name, line, h, err)
		}
		hosts = append(hosts, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("validate: host list: %s: %w", name, err)
	}
	return hosts, nil
}
