package viewcount

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// A stream message carries a batch of events (group commit), encoded compactly
// rather than as JSON: the decode runs once per event on every validator and
// during every state rebuild, and the binary form is about a third the size.
//
//	message    := version(1) uvarint(count) event*
//	event      := varint(unix ms) flags(1) ext source(1) visitor(8, LE) network(8, LE)
//	              str(site) str(page) str(referrer) str(ua) str(id) [hints] [utm] [country]
//	              [headers] [asn] [window] [origin] [engagement]
//	ext        := uvarint(extension flags)                               version 4 only
//	hints      := uvarint(screen w) uvarint(screen h) languages(1)       if flagHints
//	utm        := str(source) str(medium) str(campaign)                  if flagUTM
//	country    := two upper-case ASCII letters                           if flagCountry
//	headers    := uvarint(header flags)                                  if extHeaders
//	asn        := uvarint(autonomous system number)                      if extASN
//	window     := uvarint(outer width) uvarint(outer height)             if extWindow
//	origin     := str(page host)                                         if extOrigin
//	engagement := uvarint(engaged ms) scroll(1) uvarint(age ms)          if extEngagement
//	str        := uvarint(len) bytes
//
// Version 1 had no hints and only the webdriver flag; version 2 had no UTM
// tags and no country; version 3 had no extension flags (its flags byte is
// full, so version 4 adds a uvarint of further flags after it, one byte
// while fewer than seven are used). All still decode, so messages retained
// from before an upgrade are validated after it. The fields are behind
// flags, so a view without them costs only the extension byte.
//
// extEngagement is the event's Kind: set, it is a KindEngagement and its
// Engagement follows (scroll 0 to 100, the two times within 32 bits); unset,
// a view, encoded exactly as before engagements existed (a view carries no
// Engagement, so none is written).
const (
	codecVersion   = 4
	codecVersionV3 = 3
	codecVersionV2 = 2
	codecVersionV1 = 1
)

const (
	flagWebdriver = 1 << iota
	flagDatacenter
	flagHints // hints follow; the rest of the hint flags are meaningful
	flagTZ
	flagUAData
	flagSecure
	flagUTM     // version 3: the three UTM strings follow
	flagCountry // version 3: a country code follows

	flagsV2 = flagUTM - 1 // the flags versions 1 and 2 could set
)

// Extension flags, version 4 on.
const (
	extHeaders    = 1 << iota // header flags follow
	extASN                    // an autonomous system number follows
	extWindow                 // the window's outer size follows (Hints.Window)
	extOrigin                 // the page's host follows (Event.Origin)
	extEngagement             // an engagement report (KindEngagement): its Engagement follows

	extKnown = extEngagement<<1 - 1 // a decoder refuses bits it does not know: they would misalign the rest
)

// MaxBatch bounds the events one message may carry, so a corrupt count can
// not make a decoder allocate without limit.
const MaxBatch = 1 << 16

// ErrCorrupt is returned (wrapped) by DecodeEvents for any malformed message.
var ErrCorrupt = errors.New("corrupt event batch")

// AppendEvents appends the encoding of evs to dst and returns it.
func AppendEvents(dst []byte, evs []Event) []byte {
	dst = append(dst, codecVersion)
	dst = binary.AppendUvarint(dst, uint64(len(evs)))
	for i := range evs {
		dst = appendEvent(dst, &evs[i])
	}
	return dst
}

func appendEvent(dst []byte, e *Event) []byte {
	dst = binary.AppendVarint(dst, e.Time.UnixMilli())
	utm := e.UTM != (UTM{})
	country := validCountry(e.Country)
	flags := bit(e.Webdriver, flagWebdriver) | bit(e.Datacenter, flagDatacenter) | bit(e.Hints.Present, flagHints) |
		bit(e.Hints.TZ, flagTZ) | bit(e.Hints.UAData, flagUAData) | bit(e.Hints.Secure, flagSecure) |
		bit(utm, flagUTM) | bit(country, flagCountry)
	window := e.Hints.Present && e.Hints.Window
	engagement := e.Kind == KindEngagement
	ext := bit(e.Headers != 0, extHeaders) | bit(e.ASN != 0, extASN) | bit(window, extWindow) | bit(e.Origin != "", extOrigin) |
		bit(engagement, extEngagement)
	dst = append(dst, flags, ext, byte(e.Source))
	dst = binary.LittleEndian.AppendUint64(dst, e.Visitor)
	dst = binary.LittleEndian.AppendUint64(dst, e.Network)
	for _, s := range [...]string{e.Site, e.Page, e.Referrer, e.UA, e.ID} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	if e.Hints.Present {
		dst = binary.AppendUvarint(dst, uint64(e.Hints.ScreenW))
		dst = binary.AppendUvarint(dst, uint64(e.Hints.ScreenH))
		dst = append(dst, e.Hints.Languages)
	}
	if utm {
		for _, s := range [...]string{e.UTM.Source, e.UTM.Medium, e.UTM.Campaign} {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	if country {
		dst = append(dst, e.Country...)
	}
	if e.Headers != 0 {
		dst = binary.AppendUvarint(dst, uint64(e.Headers))
	}
	if e.ASN != 0 {
		dst = binary.AppendUvarint(dst, uint64(e.ASN))
	}
	if window {
		dst = binary.AppendUvarint(dst, uint64(e.Hints.OuterW))
		dst = binary.AppendUvarint(dst, uint64(e.Hints.OuterH))
	}
	if e.Origin != "" {
		dst = binary.AppendUvarint(dst, uint64(len(e.Origin)))
		dst = append(dst, e.Origin...)
	}
	if engagement {
		dst = binary.AppendUvarint(dst, uint64(e.Engagement.EngagedMS))
		// Capped as the decoder requires: one message carries many clients'
		// events, and one it refuses would lose them all (ingest refuses a
		// depth over 100 anyway).
		dst = append(dst, min(e.Engagement.Scroll, 100))
		dst = binary.AppendUvarint(dst, uint64(e.Engagement.AgeMS))
	}
	return dst
}

// EncodedSize bounds the bytes appendEvent writes for e, so a producer can
// size messages without encoding: 19 fixed (flags, extension flags,
// source, visitor, network), a time varint of at most 10, nine string
// length prefixes of at most 10, 7 for hints, 2 for the country, 3 for the
// header flags, 5 for the ASN, 6 for the window and 11 for an engagement.
func EncodedSize(e *Event) int {
	return 19 + 10 + 9*10 + 7 + 2 + 3 + 5 + 6 + 11 + len(e.Site) + len(e.Page) + len(e.Referrer) + len(e.UA) + len(e.ID) +
		len(e.UTM.Source) + len(e.UTM.Medium) + len(e.UTM.Campaign) + len(e.Origin)
}

// validCountry reports whether c is what Event.Country may hold besides
// "": two upper-case ASCII letters. Anything else is not encoded (the
// country is then unknown), so a decoder can take it from countryCodes
// without allocating.
func validCountry(c string) bool {
	return len(c) == 2 && 'A' <= c[0] && c[0] <= 'Z' && 'A' <= c[1] && c[1] <= 'Z'
}

// countryCodes holds every pair of upper-case letters ("AAABAC…"), so a
// decoded country is a slice of it rather than a new string per event.
var countryCodes = func() string {
	b := make([]byte, 0, 26*26*2)
	for x := byte('A'); x <= 'Z'; x++ {
		for y := byte('A'); y <= 'Z'; y++ {
			b = append(b, x, y)
		}
	}
	return string(b)
}()

func countryCode(a, b byte) (string, bool) {
	if a < 'A' || a > 'Z' || b < 'A' || b > 'Z' {
		return "", false
	}
	i := (int(a-'A')*26 + int(b-'A')) * 2
	return countryCodes[i : i+2], true
}

func bit(b bool, f byte) byte {
	if b {
		return f
	}
	return 0
}

// DecodeEvents decodes a message written by AppendEvents, appending to dst.
func DecodeEvents(dst []Event, b []byte) ([]Event, error) {
	if len(b) == 0 || b[0] < codecVersionV1 || b[0] > codecVersion {
		return dst, fmt.Errorf("%w: unknown version", ErrCorrupt)
	}
	hasExt := b[0] >= codecVersion
	mask := byte(0xff)
	switch b[0] {
	case codecVersionV1:
		mask = flagWebdriver
	case codecVersionV2:
		mask = flagsV2
	}
	d := decoder{b: b[1:]}
	n := d.uvarint()
	if d.err != nil || n > MaxBatch {
		return dst, fmt.Errorf("%w: bad count", ErrCorrupt)
	}
	for i := uint64(0); i < n; i++ {
		var e Event
		e.Time = time.UnixMilli(d.varint()).UTC()
		flags := d.byte() & mask
		var ext uint64
		if hasExt {
			if ext = d.uvarint(); ext&^extKnown != 0 && d.err == nil {
				d.fail(errors.New("unknown extension flags"))
			}
		}
		e.Webdriver = flags&flagWebdriver != 0
		e.Datacenter = flags&flagDatacenter != 0
		e.Source = Source(d.byte())
		e.Visitor = d.uint64()
		e.Network = d.uint64()
		e.Site = d.str()
		e.Page = d.str()
		e.Referrer = d.str()
		e.UA = d.str()
		e.ID = d.str()
		if flags&flagHints != 0 {
			e.Hints = Hints{Present: true, TZ: flags&flagTZ != 0, UAData: flags&flagUAData != 0, Secure: flags&flagSecure != 0}
			e.Hints.ScreenW = d.uint16()
			e.Hints.ScreenH = d.uint16()
			e.Hints.Languages = d.byte()
		}
		if flags&flagUTM != 0 {
			e.UTM = d.utm()
		}
		if flags&flagCountry != 0 {
			c, ok := countryCode(d.byte(), d.byte())
			if !ok && d.err == nil {
				d.fail(errors.New("bad country"))
			}
			e.Country = c
		}
		if ext&extHeaders != 0 {
			h := d.uvarint()
			if (h == 0 || h > 0xffff) && d.err == nil {
				d.fail(errors.New("header flags out of range"))
			}
			e.Headers = HeaderFlags(h)
		}
		if ext&extASN != 0 {
			a := d.uvarint()
			if (a == 0 || a > 0xffffffff) && d.err == nil {
				d.fail(errors.New("asn out of range"))
			}
			e.ASN = uint32(a)
		}
		if ext&extWindow != 0 {
			w, h := d.uvarint(), d.uvarint()
			if (w > 0xffff || h > 0xffff || !e.Hints.Present) && d.err == nil {
				d.fail(errors.New("window size out of range or without hints"))
			}
			e.Hints.Window, e.Hints.OuterW, e.Hints.OuterH = true, uint16(w), uint16(h)
		}
		if ext&extOrigin != 0 {
			if e.Origin = d.str(); e.Origin == "" && d.err == nil {
				d.fail(errors.New("empty origin"))
			}
		}
		if ext&extEngagement != 0 {
			engaged, scroll, age := d.uvarint(), d.byte(), d.uvarint()
			if (engaged > 0xffffffff || scroll > 100 || age > 0xffffffff) && d.err == nil {
				d.fail(errors.New("engagement out of range"))
			}
			e.Kind = KindEngagement
			e.Engagement = Engagement{EngagedMS: uint32(engaged), Scroll: scroll, AgeMS: uint32(age)}
		}
		if d.err != nil {
			return dst, fmt.Errorf("%w: event %d: %v", ErrCorrupt, i, d.err)
		}
		dst = append(dst, e)
	}
	if len(d.b) != 0 {
		return dst, fmt.Errorf("%w: %d trailing bytes", ErrCorrupt, len(d.b))
	}
	return dst, nil
}

type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("short buffer")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.fail(errShort)
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.fail(errShort)
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) uint16() uint16 {
	v := d.uvarint()
	if v > 0xffff {
		d.fail(errors.New("hint out of range"))
	}
	return uint16(v)
}

// utm reads the three UTM strings into one allocation rather than three:
// tagged views arrive in campaigns, many at a time.
func (d *decoder) utm() UTM {
	var lens [3]int
	var starts [3]int
	start := d.b
	for i := range lens {
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			d.fail(errShort)
			return UTM{}
		}
		starts[i] = len(start) - len(d.b)
		lens[i] = int(n)
		d.b = d.b[n:]
	}
	if d.err != nil {
		return UTM{}
	}
	all := string(start[:len(start)-len(d.b)])
	return UTM{
		Source:   all[starts[0] : starts[0]+lens[0]],
		Medium:   all[starts[1] : starts[1]+lens[1]],
		Campaign: all[starts[2] : starts[2]+lens[2]],
	}
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
