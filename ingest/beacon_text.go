package ingest

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// rawBeaconText holds the text fields of a beacon event as the JSON literals
// the client sent. Decoding into it follows encoding/json's own rules (keys
// matched case-insensitively, the last of a repeated key wins), so what it
// checks is exactly what BeaconEvent would hold.
type rawBeaconText struct {
	Site     json.RawMessage `json:"site"`
	Page     json.RawMessage `json:"page"`
	Referrer json.RawMessage `json:"referrer"`
	ID       json.RawMessage `json:"id"`
}

// checkBeaconText refuses a body whose site, page, referrer or id is not
// valid Unicode: raw bytes that are not UTF-8, or a \u escape of a lone
// surrogate (\ud800 alone, \udc00, a high surrogate not followed by a low
// one). encoding/json would turn each of them into U+FFFD and the view
// would be counted under a page the client never named, merging every
// broken name into one; docs/public-api.md (POST /v1/events) promises a 400
// naming the field. The fast path never accepts such a body (it refuses
// escapes and invalid UTF-8), so this runs only before the encoding/json
// fallback.
//
// A body that does not decode is left alone (nil): the fallback words its
// syntax or type error.
func checkBeaconText(body []byte) (array bool, err error) {
	if utf8.Valid(body) && !hasSurrogateEscape(body) {
		return false, nil
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 {
		return false, nil
	}
	switch body[0] {
	case '{':
		var e rawBeaconText
		if json.Unmarshal(body, &e) != nil {
			return false, nil
		}
		return false, e.check("")
	case '[':
		var evs []rawBeaconText
		if json.Unmarshal(body, &evs) != nil {
			return true, nil
		}
		for i := range evs {
			if err := evs[i].check(eventField(i)); err != nil {
				return true, err
			}
		}
		return true, nil
	}
	return false, nil
}

func (e *rawBeaconText) check(prefix string) error {
	for _, f := range [...]struct {
		name string
		raw  json.RawMessage
	}{{"site", e.Site}, {"page", e.Page}, {"referrer", e.Referrer}, {"id", e.ID}} {
		if problem := literalProblem(f.raw); problem != "" {
			return badInput("%s%s: %s", prefix, f.name, problem)
		}
	}
	return nil
}

// literalProblem says what makes the JSON string literal raw (quotes
// included, already known to be well-formed) not valid Unicode text, or
// "" if nothing does. Anything but a string is the decoder's to refuse.
func literalProblem(raw []byte) string {
	if len(raw) < 2 || raw[0] != '"' {
		return ""
	}
	if !utf8.Valid(raw) {
		return "invalid UTF-8"
	}
	s := raw[1 : len(raw)-1]
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		i++ // the escaped character; a well-formed literal has one
		if s[i] != 'u' {
			continue
		}
		r := hex4(s[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xdc00 && r <= 0xdfff:
			return "invalid UTF-16: lone surrogate escape"
		case r >= 0xd800 && r <= 0xdbff:
			if i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if lo := hex4(s[i+3 : i+7]); lo >= 0xdc00 && lo <= 0xdfff {
					i += 6
					continue
				}
			}
			return "invalid UTF-16: lone surrogate escape"
		}
	}
	return ""
}

// hex4 decodes four hex digits (known to be hex).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		d, _ := unhex(c)
		r = r<<4 | rune(d)
	}
	return r
}

// hasSurrogateEscape reports whether body may hold a \u escape of a
// surrogate (\uD800 to \uDFFF). It may say yes for an escaped backslash
// followed by "ud8..": it only decides whether the exact check runs.
func hasSurrogateEscape(body []byte) bool {
	for {
		i := bytes.Index(body, []byte(`\u`))
		if i < 0 || i+4 > len(body) {
			return false
		}
		if d, c := body[i+2], body[i+3]; (d == 'd' || d == 'D') && (c >= '8' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return true
		}
		body = body[i+2:]
	}
}
