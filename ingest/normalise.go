package ingest

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Length caps, in bytes. They bound the size of an event (and so of a stream
// message and a views_raw row) whatever a client sends.
const (
	DefaultMaxPageLen = 512
	MaxReferrerLen    = 1024
	MaxUALen          = 512
	MaxIDLen          = 128
)

// NormalisePage turns what a tracker sends as the page (a path such as
// "/blog/post/", or a full URL) into the path views are counted under:
// percent-decoded, with a leading "/", "//" collapsed, dot segments resolved,
// no trailing slash (except the root), and no query or fragment unless
// keepQuery (the query is then kept as sent). The result is capped to maxLen
// bytes (DefaultMaxPageLen when maxLen <= 0) at a UTF-8 boundary.
//
// Invalid percent escapes are kept literally rather than rejected: a page
// named "/100%" is a page, not an attack. Empty input, invalid UTF-8 and
// control characters (before or after decoding) return a wrapped ErrBadInput.
func NormalisePage(raw string, keepQuery bool, maxLen int) (string, error) {
	if maxLen <= 0 {
		maxLen = DefaultMaxPageLen
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", fmt.Errorf("%w: empty page", ErrBadInput)
	}
	if err := checkText(raw); err != nil {
		return "", err
	}
	rest := raw
	if i := schemeEnd(raw); i > 0 {
		// A full URL: skip scheme://userinfo@host:port; what follows the
		// authority is the path. Parsed by hand, not by url.Parse, so an
		// invalid escape does not reject the whole page.
		rest = raw[i:]
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			rest = rest[j:]
		} else {
			rest = ""
		}
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i]
	}
	var query string
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		rest, query = rest[:i], rest[i+1:]
	}
	p := unescape(rest)
	if err := checkText(p); err != nil {
		return "", err
	}
	// Clean collapses "//", resolves "." and "..", and drops the trailing
	// slash; on a rooted path it never returns anything but "/..." .
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	p = path.Clean(p)
	if keepQuery && query != "" {
		p += "?" + query
	}
	if len(p) > maxLen {
		p = truncate(p, maxLen)
		if len(p) > 1 && p[len(p)-1] == '/' && !strings.Contains(p, "?") {
			p = p[:len(p)-1]
		}
	}
	return p, nil
}

// NormaliseReferrer keeps scheme://host/path of a referring URL: no query or
// fragment (they carry search terms and tokens), no userinfo, host lowercased,
// capped to MaxReferrerLen. It returns "" for anything that is not an
// absolute URL with a host: a referrer is optional, so a bad one is dropped
// rather than failing the hit.
func NormaliseReferrer(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || checkText(raw) != nil {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return ""
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	s := u.Scheme + "://" + strings.ToLower(u.Host) + p
	if len(s) > MaxReferrerLen {
		s = truncate(s, MaxReferrerLen)
		// Do not leave half a percent escape behind.
		if i := strings.LastIndexByte(s, '%'); i >= 0 && i >= len(s)-2 {
			s = s[:i]
		}
	}
	return s
}

// normaliseUA caps a user agent to MaxUALen bytes and drops invalid UTF-8;
// validation needs only its start (the product and engine tokens).
func normaliseUA(ua string) string {
	ua = truncate(strings.TrimSpace(ua), MaxUALen)
	if !utf8.ValidString(ua) {
		ua = strings.ToValidUTF8(ua, "")
	}
	return ua
}

// checkText rejects invalid UTF-8 and control characters.
func checkText(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: control character", ErrBadInput)
		}
		if c >= utf8.RuneSelf {
			// Rare: fall back to the full check for the rest.
			if !utf8.ValidString(s[i:]) {
				return fmt.Errorf("%w: invalid UTF-8", ErrBadInput)
			}
			for _, r := range s[i:] {
				if unicode.IsControl(r) {
					return fmt.Errorf("%w: control character", ErrBadInput)
				}
			}
			return nil
		}
	}
	return nil
}

// schemeEnd returns the index just past "scheme://" if s starts with one.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			if strings.HasPrefix(s[i:], "://") {
				return i + 3
			}
			return 0
		default:
			return 0
		}
	}
	return 0
}

// unescape decodes valid %XX escapes and keeps anything else literally.
func unescape(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b = append(b, hi<<4|lo)
				i += 2
				continue
			}
		}
		b = append(b, c)
	}
	return string(b)
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
