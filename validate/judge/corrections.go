package judge

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
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
	// KindAllow restores views the rules rejected instead of excluding any:
	// its Value names which (AllowValue), and it is applied before the
	// exclusions, so an exclusion always wins.
	KindAllow = "allow"
)

// Restorable are the reasons an allow correction can undo: the rules that
// judge evidence, which can be wrong about someone. Never unknown_site (no
// registration to count for), excluded (an operator's exclusion wins),
// duplicate_id and duplicate (counting one view twice is never right).
var Restorable = []viewcount.Reason{viewcount.BotUA, viewcount.Headless, viewcount.BadHints,
	viewcount.HeaderMismatch, viewcount.Datacenter, viewcount.BadReferrer, viewcount.Rate, viewcount.NetworkRotation}

// AllowValue is what an allow correction matches, all terms together:
// user agents holding UA (any case), of the browser Family (the
// dashboard's browser name, any case), from AS number ASN, rejected as
// Reason (any restorable reason when empty). It is stored as its
// canonical query string, e.g. "family=Instagram&reason=bot_ua".
type AllowValue struct {
	UA, Family string
	Reason     viewcount.Reason
	ASN        uint32
}

// maxAllowUA bounds an allow's user-agent substring, like a user agent.
const maxAllowUA = 500

// ParseAllowValue reads an allow correction's value: the query string
// String writes, with the keys ua, family, reason and asn, each at most
// once and at least one of them.
func ParseAllowValue(v string) (AllowValue, error) {
	q, err := url.ParseQuery(v)
	if err != nil {
		return AllowValue{}, fmt.Errorf("value: want ua=, family=, reason= or asn= terms joined by &: %v", err)
	}
	var a AllowValue
	for k, vs := range q {
		if len(vs) != 1 || strings.TrimSpace(vs[0]) == "" {
			return a, fmt.Errorf("value: %s: give it once, not empty", k)
		}
		x := strings.TrimSpace(vs[0])
		switch k {
		case "ua":
			if len(x) > maxAllowUA {
				return a, fmt.Errorf("value: ua: at most %d bytes", maxAllowUA)
			}
			a.UA = x
		case "family":
			if len(x) > 100 {
				return a, fmt.Errorf("value: family: at most 100 bytes")
			}
			a.Family = x
		case "reason":
			r := viewcount.Reason(strings.ToLower(x))
			if !slices.Contains(Restorable, r) {
				return a, fmt.Errorf("value: reason: %q cannot be allowed; want one of %s", x, joinReasons(Restorable))
			}
			a.Reason = r
		case "asn":
			n, err := strconv.ParseUint(strings.TrimPrefix(strings.ToUpper(x), "AS"), 10, 32)
			if err != nil || n == 0 {
				return a, fmt.Errorf("value: asn: an AS number, e.g. 16509 or AS16509")
			}
			a.ASN = uint32(n)
		default:
			return a, fmt.Errorf("value: unknown term %q; want ua, family, reason or asn", k)
		}
	}
	if a == (AllowValue{}) {
		return a, fmt.Errorf("value: name what to allow: ua=, family=, reason= or asn=")
	}
	return a, nil
}

// String is the canonical value: the terms in a fixed order, each value
// escaped only where a query string must be (so "ua=AllowApp/" reads as
// typed, and "ua=(iPhone%3B%20CPU" as it must).
func (a AllowValue) String() string {
	var b strings.Builder
	term := func(k, v string) {
		if v == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(k)
		b.WriteByte('=')
		for i := 0; i < len(v); i++ {
			switch c := v[i]; {
			case c <= ' ' || c >= 0x7f || strings.IndexByte("%&=+#;", c) >= 0:
				fmt.Fprintf(&b, "%%%02X", c)
			default:
				b.WriteByte(c)
			}
		}
	}
	asn := ""
	if a.ASN != 0 {
		asn = strconv.FormatUint(uint64(a.ASN), 10)
	}
	term("asn", asn)
	term("family", a.Family)
	term("reason", string(a.Reason))
	term("ua", a.UA)
	return b.String()
}

// AllowTerms is the value of an allow correction with the terms given
// apart (an API's or a command's fields), empty ones left out; Check says
// what is wrong with it.
func AllowTerms(ua, family, reason, asn string) string {
	q := url.Values{}
	for k, v := range map[string]string{"ua": ua, "family": family, "reason": reason, "asn": asn} {
		if v != "" {
			q.Set(k, v)
		}
	}
	return q.Encode()
}

func joinReasons(rs []viewcount.Reason) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

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
	case KindAllow:
		a, err := ParseAllowValue(v)
		if err != nil {
			return err
		}
		v = a.String()
	default:
		return fmt.Errorf("kind: want %s, %s, %s, %s or %s", KindASN, KindNetwork, KindReferrer, KindPath, KindAllow)
	}
	c.Value = v
	return nil
}

// String is how a correction reads in a rule set's settings.
func (c Correction) String() string {
	return fmt.Sprintf("%s %s %s=%s [%s, %s)", c.ID, c.Site, c.Kind, c.Value, c.From.UTC().Format(time.RFC3339Nano), c.To.UTC().Format(time.RFC3339Nano))
}

// corrections matches events against the active exclusions, by site.
type corrections map[string][]Correction

// allows matches rejected events against the active allow corrections, by
// site.
type allows map[string][]allowRule

type allowRule struct {
	id       string
	from, to int64 // Unix ms
	ua       []byte
	AllowValue
}

// newCorrections checks cs and splits them into exclusions and allows.
func newCorrections(cs []Correction) (corrections, allows, error) {
	ex, al := corrections{}, allows{}
	for _, c := range cs {
		if err := c.Check(); err != nil {
			return nil, nil, fmt.Errorf("validate: correction %s: %w", c.ID, err)
		}
		if c.Kind != KindAllow {
			ex[c.Site] = append(ex[c.Site], c)
			continue
		}
		a, _ := ParseAllowValue(c.Value) // Check parsed it
		al[c.Site] = append(al[c.Site], allowRule{id: c.ID, from: c.From.UnixMilli(), to: c.To.UnixMilli(),
			ua: appendLower(nil, a.UA), AllowValue: a})
	}
	return ex, al, nil
}

// match returns the allow correction restoring e, received at t (Unix ms),
// which the rule for reason rejected; browser is its dashboard browser
// name. "" when none does.
func (as allows) match(e *viewcount.Event, browser string, reason viewcount.Reason, t int64) string {
	if len(as) == 0 {
		return ""
	}
	var buf [512]byte
	var low []byte
	for _, a := range as[e.Site] {
		if t < a.from || t >= a.to || a.Reason != "" && a.Reason != reason || !slices.Contains(Restorable, reason) ||
			a.ASN != 0 && a.ASN != e.ASN || a.Family != "" && !strings.EqualFold(a.Family, browser) {
			continue
		}
		if len(a.ua) > 0 {
			if low == nil {
				low = appendLower(buf[:0], e.UA)
			}
			if !bytes.Contains(low, a.ua) {
				continue
			}
		}
		return a.id
	}
	return ""
}

// match returns the id of the exclusion that excludes e, received at t
// (Unix ms); "" when none does.
func (cs corrections) match(e *viewcount.Event, t int64) string {
	if len(cs) == 0 {
		return ""
	}
	for _, c := range cs[e.Site] {
		if t < c.From.UnixMilli() || t >= c.To.UnixMilli() {
			continue
		}
		var hit bool
		switch c.Kind {
		case KindASN:
			hit = strconv.FormatUint(uint64(e.ASN), 10) == c.Value
		case KindNetwork:
			hit = strconv.FormatUint(e.Network, 10) == c.Value
		case KindReferrer:
			h := referrerHost(e.Referrer)
			hit = h == c.Value || strings.HasSuffix(h, "."+c.Value)
		case KindPath:
			p, prefix := strings.CutSuffix(c.Value, "*")
			hit = prefix && strings.HasPrefix(e.Page, p) || e.Page == c.Value
		}
		if hit {
			return c.ID
		}
	}
	return ""
}

// referrerHost is the referrer's host, lower case, without www.
func referrerHost(ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
}
