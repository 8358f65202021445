package judge

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/viewcount/viewcount"
)

// corrections matches events against the active exclusions, by site.
type corrections map[string][]viewcount.Correction

// allows matches rejected events against the active allow corrections, by
// site.
type allows map[string][]allowRule

type allowRule struct {
	id       string
	from, to int64 // Unix ms
	ua       []byte
	viewcount.AllowValue
}

// newCorrections checks cs and splits them into exclusions and allows.
func newCorrections(cs []viewcount.Correction) (corrections, allows, error) {
	ex, al := corrections{}, allows{}
	for _, c := range cs {
		if err := c.Check(); err != nil {
			return nil, nil, fmt.Errorf("validate: correction %s: %w", c.ID, err)
		}
		if c.Kind != viewcount.KindAllow {
			ex[c.Site] = append(ex[c.Site], c)
			continue
		}
		a, _ := viewcount.ParseAllowValue(c.Value) // Check parsed it
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
		if t < a.from || t >= a.to || a.Reason != "" && a.Reason != reason || !slices.Contains(viewcount.Restorable, reason) ||
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
		case viewcount.KindASN:
			hit = strconv.FormatUint(uint64(e.ASN), 10) == c.Value
		case viewcount.KindNetwork:
			hit = strconv.FormatUint(e.Network, 10) == c.Value
		case viewcount.KindReferrer:
			h := referrerHost(e.Referrer)
			hit = h == c.Value || strings.HasSuffix(h, "."+c.Value)
		case viewcount.KindPath:
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
