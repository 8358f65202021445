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
//	           str(site) str(page) str(referrer) str(ua) str(id)
//	str     := uvarint(len) bytes
const codecVersion = 1

const flagWebdriver = 1 << 0

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
	var flags byte
	if e.Webdriver {
		flags |= flagWebdriver
	}
	dst = append(dst, flags, byte(e.Source))
	dst = binary.LittleEndian.AppendUint64(dst, e.Visitor)
	dst = binary.LittleEndian.AppendUint64(dst, e.Network)
	for _, s := range [...]string{e.Site, e.Page, e.Referrer, e.UA, e.ID} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// DecodeEvents decodes a message written by AppendEvents, appending to dst.
func DecodeEvents(dst []Event, b []byte) ([]Event, error) {
	if len(b) == 0 || b[0] != codecVersion {
		return dst, fmt.Errorf("%w: unknown version", ErrCorrupt)
	}
	d := decoder{b: b[1:]}
	n := d.uvarint()
	if d.err != nil || n > MaxBatch {
		return dst, fmt.Errorf("%w: bad count", ErrCorrupt)
	}
	for i := uint64(0); i < n; i++ {
		var e Event
		e.Time = time.UnixMilli(d.varint()).UTC()
		flags := d.byte()
		e.Webdriver = flags&flagWebdriver != 0
		e.Source = Source(d.byte())
		e.Visitor = d.uint64()
		e.Network = d.uint64()
		e.Site = d.str()
		e.Page = d.str()
		e.Referrer = d.str()
		e.UA = d.str()
		e.ID = d.str()
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
