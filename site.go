package viewcount

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"
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

// CheckRegistrable normalises a domain being registered as a site
// (NormaliseSite) and refuses what is not a public host name: an IP
// address (bracketed or not), a single label, "localhost" or a name under
// it, a label with an underscore, a top-level label of digits only. A
// site's hits come from browsers on the public web; registering "localhost"
// or an address would let any local or scanned traffic count
// (TestCheckRegistrable).
// Ingest keeps NormaliseSite's looser rule, so hits for such names are
// still recorded, as unknown_site.
//
// The error wraps ErrBadSite; its text after "invalid site: " is worded
// for the client.
func CheckRegistrable(s string) (string, error) {
	raw := strings.Trim(strings.TrimSpace(s), "[]")
	if _, err := netip.ParseAddr(raw); err == nil {
		return "", fmt.Errorf("%w: an IP address, not a host name", ErrBadSite)
	}
	site, err := NormaliseSite(s)
	if err != nil {
		return "", fmt.Errorf("%w: not a host name", ErrBadSite)
	}
	dot := strings.LastIndexByte(site, '.')
	if dot < 0 {
		return "", fmt.Errorf("%w: a single label, not a public host name", ErrBadSite)
	}
	if strings.Contains(site, "_") {
		return "", fmt.Errorf("%w: underscore in a host name", ErrBadSite)
	}
	tld := site[dot+1:]
	if strings.Trim(tld, "0123456789") == "" {
		return "", fmt.Errorf("%w: the last label is a number (an IP address?)", ErrBadSite)
	}
	if tld == "localhost" {
		return "", fmt.Errorf("%w: localhost is not a public host name", ErrBadSite)
	}
	return site, nil
}

// Registrations says which sites are registered, and since when. A site's
// registration is one span of it in the registry, from its Add to its
// Delete: a site deleted and added again is a new registration, whose
// owner may be someone else, and none of the views of the one before may
// count for it. Implementations are in-memory (internal/stream.Sites), cheap
// and safe for concurrent use: validators consult them for every event.
type Registrations interface {
	// Registered returns when the site's current registration was made
	// (the registry's clock, millisecond precision); ok is false when the
	// site is not registered.
	Registered(site string) (since time.Time, ok bool)
}

// InRegistration reports whether a view of site received at t belongs to
// the site's current registration: the site is registered, and was when
// the view came. A view received before the registration began (in flight
// while the site was deleted and added again, or sent before the site was
// first added) belongs to none, and is judged UnknownSite whenever it is
// judged: this is what lets a re-added site start empty whatever was still
// in the stream, held for settling or waiting for its insert.
func InRegistration(r Registrations, site string, t time.Time) bool {
	since, ok := r.Registered(site)
	return ok && !t.Before(since)
}

// Site is a registered site as the registry stores it (internal/stream
// keeps it in the VC_SITES bucket). Only a hash of the site token is kept,
// so a copy of the bucket does not grant API access.
type Site struct {
	Domain    string `json:"domain"`
	TokenHash string `json:"token_sha256"`
	// Created is when this registration was made, to the millisecond
	// (entries written before that was needed hold whole seconds): views
	// received before it belong to none of the site's registrations
	// (InRegistration).
	Created time.Time `json:"created"`
	// Timezone is the IANA zone the site's day buckets follow (stats API,
	// dashboard); "" means UTC.
	Timezone string `json:"timezone,omitempty"`
	// ShareHash is the hash of the site's read-only share token ("" = no
	// share link).
	ShareHash string `json:"share_sha256,omitempty"`
	// Hosts is the history of the site's hostnames, oldest first, a
	// bounded number of versions (the registry drops the oldest); before
	// the first, and when there is none, the site has DefaultHostnames. A
	// view is judged by the version in force when it was received.
	Hosts []Hostnames `json:"hostnames,omitempty"`
	// EngagedAfter is the engaged time, in whole seconds, that makes a
	// view an engaged view (docs/engagement.md); 0 means
	// DefaultEngagedAfter. One of EngagedBuckets (CheckEngagedAfter), so
	// an engaged count is a sum of whole histogram buckets and a change
	// applies to all history at once.
	EngagedAfter int `json:"engaged_after,omitempty"`
	// CountMode is what the site's public counts count: CountViews ("",
	// every counted view) or CountEngaged (only engaged views, the way a
	// video site counts a view only once someone watched).
	CountMode CountMode `json:"count_mode,omitempty"`
	// EmbedOrigins are the origins allowed to show the site's dashboard
	// in a frame (CheckEmbedOrigins); none: no frame may.
	EmbedOrigins []string `json:"embed_origins,omitempty"`
}

// CountMode is what a site's public counts (/count, /counts, the badge,
// data-vc-count) count.
type CountMode string

const (
	CountViews   CountMode = ""        // every counted view; "views" on the wire
	CountEngaged CountMode = "engaged" // engaged views only
)

// ParseCountMode reads a count mode as the admin API takes it.
func ParseCountMode(s string) (CountMode, error) {
	switch s {
	case "views":
		return CountViews, nil
	case "engaged":
		return CountEngaged, nil
	}
	return "", fmt.Errorf(`count_mode %q: want "views" or "engaged"`, s)
}

// String is the mode as the API shows it.
func (m CountMode) String() string {
	if m == CountViews {
		return "views"
	}
	return string(m)
}

// Engaged is the site's engaged-view threshold.
func (site Site) Engaged() time.Duration {
	if site.EngagedAfter == 0 {
		return DefaultEngagedAfter
	}
	return time.Duration(site.EngagedAfter) * time.Second
}

// CheckEngagedAfter accepts an engaged_after of seconds seconds: a bucket
// bound of the engaged-time histogram (EngagedBuckets), not 0.
func CheckEngagedAfter(seconds int) error {
	for _, b := range EngagedBuckets[1:] {
		if int(b) == seconds {
			return nil
		}
	}
	return fmt.Errorf("engaged_after %d: want one of %s seconds", seconds, engagedBounds())
}

func engagedBounds() string {
	var b strings.Builder
	for i, x := range EngagedBuckets[1:] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}

// Hostnames returns the site's hostnames in force now.
func (site Site) Hostnames() []string {
	if n := len(site.Hosts); n > 0 {
		return site.Hosts[n-1].Hosts
	}
	return DefaultHostnames(site.Domain)
}

// CheckToken reports whether token is the site's token, in constant time.
func (site Site) CheckToken(token string) bool {
	return subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(site.TokenHash)) == 1
}

// CheckShareToken reports whether token is the site's share token, in
// constant time; false when the site has no share link.
func (site Site) CheckShareToken(token string) bool {
	if site.ShareHash == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(HashToken(token)), []byte(site.ShareHash)) == 1
}

// CheckTimezone returns nil for an IANA zone name, else an error wrapping
// ErrBadTimezone. "Local" (the server's own zone, which differs between
// machines) and "" are refused. The binary embeds the zone database, so
// the answer does not depend on the machine's.
func CheckTimezone(zone string) error {
	if zone == "" || zone == "Local" || len(zone) > 64 || strings.ContainsAny(zone, " \\") {
		return fmt.Errorf("%w: %q", ErrBadTimezone, zone)
	}
	if _, err := time.LoadLocation(zone); err != nil {
		return fmt.Errorf("%w: %q", ErrBadTimezone, zone)
	}
	return nil
}
