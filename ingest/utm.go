package ingest

import (
	"strings"
	"unicode/utf8"

	"github.com/viewcount/viewcount"
)

// UTM tag caps, in bytes, cut on a UTF-8 boundary. Sources and mediums are
// short words ("newsletter", "cpc"); campaign names run longer. Longer
// values are cut, not refused: a tag is a hint about the visit, never a
// reason to lose it.
const (
	MaxUTMSourceLen   = 64
	MaxUTMMediumLen   = 64
	MaxUTMCampaignLen = 128
)

// ParseUTM reads utm_source, utm_medium and utm_campaign from the query of
// a page as a tracker sends it (a path with a query, or a full URL) before
// NormalisePage drops the query. Values are decoded as a browser's
// URLSearchParams does ("+" is a space, %XX a byte, invalid escapes kept as
// they are), trimmed, lower-cased and capped. The first occurrence of a key
// wins, as URLSearchParams.get returns it; keys match exactly (GA and
// Plausible treat "UTM_SOURCE" as another parameter too). A value that is
// not valid UTF-8 after decoding, or holds a control character, is dropped
// rather than stored altered.
func ParseUTM(page string) viewcount.UTM {
	i := strings.IndexByte(page, '?')
	if i < 0 {
		return viewcount.UTM{}
	}
	q := page[i+1:]
	if j := strings.IndexByte(q, '#'); j >= 0 {
		q = q[:j]
	}
	// Nearly every page view carries no tag: one substring search decides.
	if !strings.Contains(q, "utm") {
		return viewcount.UTM{}
	}
	var u viewcount.UTM
	var seen uint8
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		key, value, _ := strings.Cut(pair, "=")
		if strings.ContainsAny(key, "%+") {
			key = formDecode(key)
		}
		var dst *string
		var bit uint8
		var limit int
		switch key {
		case "utm_source":
			dst, bit, limit = &u.Source, 1, MaxUTMSourceLen
		case "utm_medium":
			dst, bit, limit = &u.Medium, 2, MaxUTMMediumLen
		case "utm_campaign":
			dst, bit, limit = &u.Campaign, 4, MaxUTMCampaignLen
		default:
			continue
		}
		if seen&bit != 0 {
			continue
		}
		seen |= bit
		*dst = utmValue(value, limit)
	}
	return u
}

// utmValue decodes, checks, trims, lower-cases and caps one tag value.
func utmValue(raw string, limit int) string {
	v := formDecode(raw)
	if checkText(v) != nil {
		return ""
	}
	v = strings.ToLower(strings.TrimSpace(v))
	if !utf8.ValidString(v) { // ToLower maps valid text to valid text; kept as a guard
		return ""
	}
	return strings.TrimSpace(truncate(v, limit))
}

// formDecode is application/x-www-form-urlencoded decoding as browsers do
// it: "+" becomes a space, valid %XX escapes become their byte, anything
// else is kept literally (a lone "%" is a percent sign, not an error).
func formDecode(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	return unescape(strings.ReplaceAll(s, "+", " "))
}
