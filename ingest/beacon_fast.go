package ingest

import (
	"unicode/utf8"
)

// fastBeacon decodes the beacon bodies trackers actually send — compact or
// indented JSON, the known fields only, strings without escapes — far
// cheaper than encoding/json, which scans an array body three
// times (validate, split into elements, decode each) and allocates every
// string separately. At the batch endpoint's 100 events per request that
// was the largest cost of ingesting an event (BenchmarkBeacon;
// docs/benchmarks/history/round-2.md, "What changed in round 2").
//
// It is a fast path, not a second JSON implementation: it answers ok only
// when the body is one it fully understands, and then its hits are exactly
// what encoding/json would decode (FuzzFastBeaconMatchesJSON checks this on
// arbitrary input). Anything else — an escape, an unknown or differently
// cased key, null, a float, invalid UTF-8, a syntax error — returns !ok,
// and decodeBeacon takes the encoding/json path, which also words the
// error a client sees (checkBeaconText first refuses the text encoding/json
// would silently turn into U+FFFD).
//
// The strings of all hits share one copy of the body, so a request costs
// one allocation for its text instead of four per event.
func fastBeacon(body []byte) (hits []Hit, array, ok bool) {
	p := beaconParser{s: string(body)}
	p.space()
	switch p.peek() {
	case '{':
		var h Hit
		if !p.object(&h) {
			return nil, false, false
		}
		hits = []Hit{h}
	case '[':
		array = true
		p.i++
		p.space()
		if p.peek() == ']' {
			return nil, true, false // empty: the slow path words the error
		}
		hits = make([]Hit, 0, 16)
		for {
			if len(hits) == MaxBeaconEvents {
				return nil, true, false
			}
			var h Hit
			if p.peek() != '{' || !p.object(&h) {
				return nil, true, false
			}
			hits = append(hits, h)
			p.space()
			if p.peek() == ',' {
				p.i++
				p.space()
				continue
			}
			if p.peek() != ']' {
				return nil, true, false
			}
			p.i++
			break
		}
	default:
		return nil, false, false
	}
	p.space()
	if p.i != len(p.s) {
		return nil, array, false
	}
	return hits, array, true
}

type beaconParser struct {
	s string
	i int
}

func (p *beaconParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *beaconParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object reads one event object at p.i ('{').
func (p *beaconParser) object(h *Hit) bool {
	sawHints := false
	ok := p.members(func(key string) bool {
		var ok bool
		switch key {
		case "site":
			h.Site, ok = p.str()
		case "page":
			h.Page, ok = p.str()
		case "referrer":
			h.Referrer, ok = p.str()
		case "id":
			h.ID, ok = p.str()
		case "webdriver":
			h.Webdriver, ok = p.boolean()
		case "host":
			h.Host, ok = p.str()
		case "type":
			h.report().Type, ok = p.str()
		case "engaged_ms":
			h.report().EngagedMS, ok = p.wireInt()
		case "scroll":
			h.report().Scroll, ok = p.wireInt()
		case "age_ms":
			h.report().AgeMS, ok = p.wireInt()
		case "hints":
			// A repeated hints object would merge into the first in
			// encoding/json; not worth mirroring.
			if sawHints || p.peek() != '{' {
				return false
			}
			sawHints = true
			ok = p.hints(h)
		}
		return ok
	})
	// encoding/json cannot tell "type":"" from no type: neither is a
	// report (BeaconEvent.hit).
	if h.Report != nil && *h.Report == (WireReport{}) {
		h.Report = nil
	}
	return ok
}

// report is h's Report, made on the first of its keys: a view without them
// allocates nothing for them.
func (h *Hit) report() *WireReport {
	if h.Report == nil {
		h.Report = new(WireReport)
	}
	return h.Report
}

// hints reads the hints object at p.i ('{') into h.Hints, clamped as
// BeaconHints.hints does.
func (p *beaconParser) hints(h *Hit) bool {
	var b BeaconHints
	var ow, oh int64 // no pointers into b: they would escape, an allocation per hit
	sawW, sawH := false, false
	ok := p.members(func(key string) bool {
		var ok bool
		switch key {
		case "sw":
			b.ScreenW, ok = p.integer()
		case "sh":
			b.ScreenH, ok = p.integer()
		case "lang":
			b.Languages, ok = p.integer()
		case "tz":
			b.TZ, ok = p.boolean()
		case "uad":
			b.UAData, ok = p.boolean()
		case "sec":
			b.Secure, ok = p.boolean()
		case "ow":
			ow, ok = p.integer()
			sawW = true
		case "oh":
			oh, ok = p.integer()
			sawH = true
		}
		return ok
	})
	h.Hints = b.hints()
	if sawW && sawH {
		h.Hints.Window, h.Hints.OuterW, h.Hints.OuterH = true, uint16(clamp(ow, 0xffff)), uint16(clamp(oh, 0xffff))
	}
	return ok
}

// members reads the object at p.i ('{'), calling value for each member
// with p.i at the member's value, which value must consume. An unknown key
// is value's to refuse (false), like any syntax error.
func (p *beaconParser) members(value func(key string) bool) bool {
	p.i++ // '{'
	p.space()
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		key, ok := p.str()
		if !ok {
			return false
		}
		p.space()
		if p.peek() != ':' {
			return false
		}
		p.i++
		p.space()
		if !value(key) {
			return false
		}
		p.space()
		switch p.peek() {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string without escapes; its value is a substring of the body.
func (p *beaconParser) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.i + 1
	ascii := true
	for j := start; j < len(p.s); j++ {
		c := p.s[j]
		switch {
		case c == '"':
			v := p.s[start:j]
			// Left to the slow path, which refuses it naming the field.
			if !ascii && !utf8.ValidString(v) {
				return "", false
			}
			p.i = j + 1
			return v, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= 0x80:
			ascii = false
		}
	}
	return "", false
}

func (p *beaconParser) boolean() (bool, bool) {
	switch {
	case len(p.s)-p.i >= 4 && p.s[p.i:p.i+4] == "true":
		p.i += 4
		return true, true
	case len(p.s)-p.i >= 5 && p.s[p.i:p.i+5] == "false":
		p.i += 5
		return false, true
	}
	return false, false
}

// wireInt reads an integer as encoding/json sets a *int64 (BeaconEvent's
// engagement numbers): sent, whatever its value.
func (p *beaconParser) wireInt() (WireInt, bool) {
	v, ok := p.integer()
	return WireInt{V: v, Set: true}, ok
}

// integer reads a JSON integer of at most 18 digits (no fraction or
// exponent, which encoding/json refuses for an int64, and no overflow).
func (p *beaconParser) integer() (int64, bool) {
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
	}
	start := p.i
	var v int64
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		v = v*10 + int64(p.s[p.i]-'0')
		p.i++
	}
	n := p.i - start
	if n == 0 || n > 18 || (n > 1 && p.s[start] == '0') {
		return 0, false
	}
	switch p.peek() {
	case '.', 'e', 'E':
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
