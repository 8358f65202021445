package viewcount

import (
	"errors"
	"strings"
)

// ErrBadSite is returned (wrapped) by NormaliseSite.
var ErrBadSite = errors.New("invalid site")

// MaxSiteLen is DNS's limit on a name.
const MaxSiteLen = 253

// NormaliseSite turns what a user or a tracker sends as a site ("Example.COM.",
// "example.com:443") into the registry key ("example.com"). Ingest, the site
// registry and the api all use it, so a site matches however it was written.
// Only ASCII names are accepted: internationalised domains come as punycode.
func NormaliseSite(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.Contains(s[i:], "]") {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return "", ErrBadSite
	}
	if len(s) > MaxSiteLen {
		return "", errors.Join(ErrBadSite, errors.New("longer than 253 bytes"))
	}
	// Labels are walked in place: the api normalises the site of every read,
	// and strings.Split would allocate for a name that is almost always
	// normal already.
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", ErrBadSite
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", ErrBadSite
			}
		}
	}
	return s, nil
}
