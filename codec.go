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
//	message := version(1) uvarint(count) event*
//	event   := varint(unix ms) flags(1) source(1) visitor(8, LE) network(8, LE)
//	           str(site) str(page) str(referrer) str(ua) str(id) [hints]
//	hints   := uvarint(screen w) uvarint(screen h) languages(1)   if flagHints
//	str     := uvarint(len) bytes
//
// Version 1 had no hints and only the webdriver flag; it still decodes, so
// messages retained from before an upgrade are validated after it.
const (
	codecVersion   = 2
	codecVersionV1 = 1
)

const (
	flagWebdriver = 1 << iota
	flagDatacenter
	flagHints // hints follow; the rest of the hint flags are meaningful
	flagTZ
	flagUAData
	flagSecure
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
	flags := bit(e.Webdriver, flagWebdriver) | bit(e.Datacenter, flagDatacenter) | bit(e.Hints.Present, flagHints) |
		bit(e.Hints.TZ, flagTZ) | bit(e.Hints.UAData, flagUAData) | bit(e.Hints.Secure, flagSecure)
	dst = append(dst, flags, byte(e.Source))
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
	return dst
}

// EncodedSize bounds the bytes appendEvent writes for e, so a producer can
// size messages without encoding: 18 fixed (flags, source, visitor,
// network), a time varint of at most 10, five string length prefixes of at
// most 10, and 7 for hints.
func EncodedSize(e *Event) int {
	return 18 + 10 + 5*10 + 7 + len(e.Site) + len(e.Page) + len(e.Referrer) + len(e.UA) + len(e.ID)
}

func bit(b bool, f byte) byte {
	if b {
		return f
	}
	return 0
}

// DecodeEvents decodes a message written by AppendEvents, appending to dst.
func DecodeEvents(dst []Event, b []byte) ([]Event, error) {
	if len(b) == 0 || (b[0] != codecVersion && b[0] != codecVersionV1) {
		return dst, fmt.Errorf("%w: unknown version", ErrCorrupt)
	}
	v1 := b[0] == codecVersionV1
	d := decoder{b: b[1:]}
	n := d.uvarint()
	if d.err != nil || n > MaxBatch {
		return dst, fmt.Errorf("%w: bad count", ErrCorrupt)
	}
	for i := uint64(0); i < n; i++ {
		var e Event
		e.Time = time.UnixMilli(d.varint()).UTC()
		flags := d.byte()
		if v1 {
			flags &= flagWebdriver
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
