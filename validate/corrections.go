package validate

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
)

// The kinds of operator correction.
const (
	KindASN      = "asn"      // an autonomous system, by number (views_raw.asn)
	KindNetwork  = "network"  // one day's network id (views_raw.network: a hashed /24 or /48, salted daily)
	KindReferrer = "referrer" // a referrer host and its subdomains
	KindPath     = "path"     // a page path, or a prefix ending in *
)

// Correction is an operator's exclusion: a site's views from a network,
// from a referrer or of a path, received in [From, To), are Excluded. It
// is a rule like the others (in Config, so in the rule set's version), but
// written by an operator for a time range, recorded with who and why in the
// corrections table, and applied to the past by a revalidation.
type Correction struct {
	ID    string    `json:"id"`
	Site  string    `json:"site"`
	Kind  string    `json:"kind"`
	Value string    `json:"value"`
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
}

// Check reports what is wrong with c, naming the field; it normalises Value.
func (c *Correction) Check() error {
	switch {
	case c.Site == "":
		return fmt.Errorf("site: required")
	case c.From.IsZero() || c.To.IsZero() || !c.From.Before(c.To):
		return fmt.Errorf("from, to: want from before to (RFC 3339)")
	}
	v := strings.TrimSpace(c.Value)
	switch c.Kind {
	case KindASN:
		v = strings.TrimPrefix(strings.ToUpper(v), "AS")
		if n, err := strconv.ParseUint(v, 10, 32); err != nil || n == 0 {
			return fmt.Errorf("value: an AS number, e.g. 16509 or AS16509")
		}
	case KindNetwork:
		if _, err := strconv.ParseUint(v, 10, 64); err != nil {
			return fmt.Errorf("value: a network id as views_raw.network holds it (a decimal number)")
		}
	case KindReferrer:
		if u, err := url.Parse(v); err == nil && u.Host != "" {
			v = u.Hostname()
		}
		v = strings.TrimPrefix(strings.ToLower(v), "www.")
		if v == "" || strings.ContainsAny(v, "/ ") {
			return fmt.Errorf("value: a referrer host, e.g. spam.example")
		}
	case KindPath:
		if !strings.HasPrefix(v, "/") {
			return fmt.Errorf("value: a page path starting with /, or a prefix ending in *")
		}
	default:
		return fmt.Errorf("kind: want %s, %s, %s or %s", KindASN, KindNetwork, KindReferrer, KindPath)
	}
	c.Value = v
	return nil
}

// String is how a correction reads in a rule set's settings.
func (c Correction) String() string {
	return fmt.Sprintf("%s %s %s=%s [%s, %s)", c.ID, c.Site, c.Kind, c.Value, c.From.UTC().Format(time.RFC3339Nano), c.To.UTC().Format(time.RFC3339Nano))
}

// corrections matches events against the active corrections, by site.
type corrections map[string][]Correction

func newCorrections(cs []Correction) (corrections, error) {
	out := corrections{}
	for _, c := range cs {
		if err := c.Check(); err != nil {
			return nil, fmt.Errorf("validate: correction %s: %w", c.ID, err)
		}
		out[c.Site] = append(out[c.Site], c)
	}
	return out, nil
}

// match reports whether a correction excludes e, received at t (Unix ms).
func (cs corrections) match(e *viewcount.Event, t int64) bool {
	if len(cs) == 0 {
		return false
	}
	for _, c := range cs[e.Site] {
		if t < c.From.UnixMilli() || t >= c.To.UnixMilli() {
			continue
		}
		switch c.Kind {
		case KindASN:
			if strconv.FormatUint(uint64(e.ASN), 10) == c.Value {
				return true
			}
		case KindNetwork:
			if strconv.FormatUint(e.Network, 10) == c.Value {
				return true
			}
		case KindReferrer:
			if h := referrerHost(e.Referrer); h == c.Value || strings.HasSuffix(h, "."+c.Value) {
				return true
			}
		case KindPath:
			if p, ok := strings.CutSuffix(c.Value, "*"); ok && strings.HasPrefix(e.Page, p) || e.Page == c.Value {
				return true
			}
		}
	}
	return false
}

// referrerHost is the referrer's host, lower case, without www.
func referrerHost(ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}
