package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/viewcount/viewcount"
)

// maxLowCardValues bounds viewsEncoder.values between batches. The
// LowCardinality columns hold few values by design, but some come from
// beacons (utm_source, origin), so made-up values must not grow an
// encoder's cache for ever.
const maxLowCardValues = 1 << 14

// LowCardinality serialization flags (ClickHouse's
// SerializationLowCardinality; clickhouse-go writes both on every column):
// the dictionary is sent with the keys, and replaces any earlier one.
const (
	lcHasAdditionalKeys = 1 << 9
	lcUpdateDictionary  = 1 << 10
)

// viewsEncoder fills an InsertViews batch. It writes every column in the
// native protocol's serialization into a buffer of its own, then has each
// of the batch's columns decode its part, as clickhouse-go does with a
// block from the server; the batch then sends the block as usual.
//
// Why not batch.Column(i).Append: the driver's columns start empty in
// every batch and grow by appending, and its LowCardinality column boxes
// every row's value and looks it up twice in a map keyed by interfaces.
// For views_raw's 62 columns, 16 of them LowCardinality, that was most of
// BenchmarkClickHouseNativeEncode/columns even with our own slices reused
// (docs/benchmarks/history/issue-25.md, "Server encoding"). Decoding
// sizes each column once.
//
// The bytes sent are the ones Append would produce: the same values, each
// dictionary in first-seen order after the default value, keys of the
// width the driver picks (TestAppendColumnsBytes compares the two). The
// encoder checks each of the batch's columns is of the Go type it writes
// for, so a changed table fails the insert rather than misreading it.
//
// The buffer and the LowCardinality values are kept for the next batch:
// a batch allocates per column, not per row. An encoder fills one batch at
// a time; chStore hands them out from an encoderPool.
type viewsEncoder struct {
	buf  []byte
	src  bytes.Reader
	keys []uint32   // a LowCardinality column's rows as dictionary positions
	dict []*lcValue // its dictionary after the default value, first seen first

	values map[string]*lcValue
	pass   uint64 // LowCardinality columns written so far, by this encoder

	// One batch's, while appendColumns runs.
	rows []viewcount.Verdict
	cols []column.Interface
	next int   // the column written next
	err  error // the first column of an unexpected name or type
}

// maxIdleEncoders is how many encoders an encoderPool keeps between
// batches: one per validator partition a process inserts for at once, by
// default (viewcount.DefaultPartitions).
const maxIdleEncoders = 4

// maxKeptBuffer is the largest buffer an idle encoder keeps, as the chDB
// adapter's: a rare huge batch does not pin its memory for ever.
const maxKeptBuffer = 64 << 20

// encoderPool keeps idle viewsEncoders for later batches. Not a
// sync.Pool: the garbage collector empties that between batches a second
// or more apart, and each batch would grow a new encoder's buffer again.
// The zero value is ready to use.
type encoderPool struct {
	mu   sync.Mutex
	idle []*viewsEncoder
}

func (p *encoderPool) get() *viewsEncoder {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		e := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		return e
	}
	return new(viewsEncoder)
}

func (p *encoderPool) put(e *viewsEncoder) {
	if cap(e.buf) > maxKeptBuffer {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) < maxIdleEncoders {
		p.idle = append(p.idle, e)
	}
}

// lcValue is a value met in a LowCardinality column, and its position in
// the dictionary of the column being written (pass).
type lcValue struct {
	s    string
	pass uint64
	idx  uint32
}

// appendColumns fills batch's columns with rows, in viewsColumns order.
func (e *viewsEncoder) appendColumns(batch driver.Batch, rows []viewcount.Verdict) error {
	if len(rows) == 0 {
		return nil
	}
	e.rows, e.cols, e.next, e.err = rows, batch.Columns(), 0, nil
	defer func() { e.rows, e.cols = nil, nil }()
	if len(e.cols) != viewsColumnCount {
		return fmt.Errorf("the batch has %d columns, want %d", len(e.cols), viewsColumnCount)
	}
	if e.values == nil || len(e.values) > maxLowCardValues {
		e.values = make(map[string]*lcValue)
	}
	e.buf = e.buf[:0]
	e.writeColumns()
	if e.err == nil && e.next != len(e.cols) {
		e.err = fmt.Errorf("wrote %d columns of the batch's %d", e.next, len(e.cols))
	}
	if e.err != nil {
		return e.err
	}
	e.src.Reset(e.buf)
	r := chproto.NewReader(&e.src)
	for _, c := range e.cols {
		if err := c.Decode(r, len(rows)); err != nil {
			return fmt.Errorf("column %s: %w", c.Name(), err)
		}
	}
	return nil
}

// writeColumns writes every column, in viewsColumns order: the values the
// tests' row-wise reference, nativeRow, gives the driver's Append.
func (e *viewsEncoder) writeColumns() {
	type V = viewcount.Verdict
	e.dateTime64("time", func(r *V) time.Time { return r.Time })
	e.lowCard("site", func(r *V) string { return r.Site })
	e.str("page", func(r *V) string { return r.Page })
	e.str("referrer", func(r *V) string { return r.Referrer })
	e.str("ua", func(r *V) string { return r.UA })
	e.str("event_id", func(r *V) string { return r.ID })
	e.u64("visitor", func(r *V) uint64 { return r.Visitor })
	e.u64("network", func(r *V) uint64 { return r.Network })
	e.boolean("webdriver", func(r *V) bool { return r.Webdriver })
	e.boolean("datacenter", func(r *V) bool { return r.Datacenter })
	e.boolean("hints_present", func(r *V) bool { return r.Hints.Present })
	e.u16("screen_w", func(r *V) uint16 { return r.Hints.ScreenW })
	e.u16("screen_h", func(r *V) uint16 { return r.Hints.ScreenH })
	e.u8("languages", func(r *V) uint8 { return r.Hints.Languages })
	e.boolean("tz", func(r *V) bool { return r.Hints.TZ })
	e.boolean("ua_data", func(r *V) bool { return r.Hints.UAData })
	e.boolean("secure_context", func(r *V) bool { return r.Hints.Secure })
	e.lowCard("source", func(r *V) string { return r.Source.String() })
	e.lowCard("verdict", func(r *V) string { return string(r.Reason) })
	e.u16("partition", func(r *V) uint16 { return r.Partition })
	e.u64("seq", func(r *V) uint64 { return r.Seq })
	e.u32("idx", func(r *V) uint32 { return r.Index })
	e.lowCard("utm_source", func(r *V) string { return r.UTM.Source })
	e.lowCard("utm_medium", func(r *V) string { return r.UTM.Medium })
	e.str("utm_campaign", func(r *V) string { return r.UTM.Campaign })
	e.lowCard("country", func(r *V) string { return r.Country })
	e.str("ref_host", func(r *V) string { return r.Dims.RefHost })
	e.lowCard("ref_source", func(r *V) string { return r.Dims.RefSource })
	e.lowCard("browser", func(r *V) string { return r.Dims.Browser })
	e.lowCard("os", func(r *V) string { return r.Dims.OS })
	e.lowCard("device", func(r *V) string { return r.Dims.Device })
	e.lowCard("screen", func(r *V) string { return r.Dims.Screen })
	e.u64("batch", func(r *V) uint64 { return r.Batch })
	e.u16("req_flags", func(r *V) uint16 { return uint16(r.Headers) })
	e.u32("asn", func(r *V) uint32 { return r.ASN })
	e.lowCard("rules", func(r *V) string { return r.Rules })
	e.boolean("window_reported", func(r *V) bool { return r.Hints.Window })
	e.u16("window_w", func(r *V) uint16 { return r.Hints.OuterW })
	e.u16("window_h", func(r *V) uint16 { return r.Hints.OuterH })
	e.lowCard("origin", func(r *V) string { return r.Origin })
	e.u8("kind", func(r *V) uint8 { return uint8(r.Kind) })
	e.u32("engaged_ms", func(r *V) uint32 { return r.Engagement.EngagedMS })
	e.u8("scroll", func(r *V) uint8 { return r.Engagement.Scroll })
	e.u32("age_ms", func(r *V) uint32 { return r.Engagement.AgeMS })
	e.boolean("visit_set", func(r *V) bool { return r.Visit.Set })
	// A zero VisitDelta time goes as 0, the Unix epoch: the column's default.
	e.dateTime64("view_time", func(r *V) time.Time { return r.Visit.ViewTime })
	e.dateTime64("visit_start", func(r *V) time.Time { return r.Visit.VisitStart })
	e.str("entry_page", func(r *V) string { return r.Visit.EntryPage })
	e.str("entry_ref_host", func(r *V) string { return r.Visit.EntryRefHost })
	e.lowCard("entry_ref_source", func(r *V) string { return r.Visit.EntryRefSource })
	e.lowCard("entry_utm_source", func(r *V) string { return r.Visit.EntryUTM.Source })
	e.lowCard("entry_utm_medium", func(r *V) string { return r.Visit.EntryUTM.Medium })
	e.str("entry_utm_campaign", func(r *V) string { return r.Visit.EntryUTM.Campaign })
	e.str("prev_page", func(r *V) string { return r.Visit.PrevPage })
	e.i8("d_visits", func(r *V) int8 { return r.Visit.Visits })
	e.i8("d_bounces", func(r *V) int8 { return r.Visit.Bounces })
	e.i32("d_visit_ms", func(r *V) int32 { return r.Visit.VisitMS })
	e.i32("d_engaged_ms", func(r *V) int32 { return r.Visit.EngagedMS })
	e.i8("eng_from", func(r *V) int8 { return visitBucket(&r.Visit, r.Visit.EngagedFrom) })
	e.i8("eng_to", func(r *V) int8 { return visitBucket(&r.Visit, r.Visit.EngagedTo) })
	e.i8("scroll_from", func(r *V) int8 { return visitBucket(&r.Visit, r.Visit.ScrollFrom) })
	e.i8("scroll_to", func(r *V) int8 { return visitBucket(&r.Visit, r.Visit.ScrollTo) })
}

// nextColumn returns the batch's next column as a T, or records that it is
// not one or not the column named name.
func nextColumn[T column.Interface](e *viewsEncoder, name string) (T, bool) {
	var want T
	if e.err == nil && e.next == len(e.cols) {
		e.err = fmt.Errorf("column %s: the batch has %d columns", name, len(e.cols))
	}
	if e.err != nil {
		return want, false
	}
	c := e.cols[e.next]
	e.next++
	got, ok := c.(T)
	if !ok || c.Name() != name {
		e.err = fmt.Errorf("column %d: the batch's is %s %s, want %s as %T", e.next-1, c.Name(), c.Type(), name, want)
		return want, false
	}
	return got, true
}

func (e *viewsEncoder) str(name string, v func(*viewcount.Verdict) string) {
	if _, ok := nextColumn[*column.String](e, name); !ok {
		return
	}
	b := e.buf
	for i := range e.rows {
		b = appendString(b, v(&e.rows[i]))
	}
	e.buf = b
}

// lowCard writes a LowCardinality(String) column as clickhouse-go's
// LowCardinality.Encode does after its AppendRow: the flags and key type,
// the dictionary (the default value "" first, then each value in the
// order met, "" included, as the driver's map holds it), and the keys.
func (e *viewsEncoder) lowCard(name string, v func(*viewcount.Verdict) string) {
	c, ok := nextColumn[*column.LowCardinality](e, name)
	if !ok {
		return
	}
	if c.ScanType() != reflect.TypeFor[string]() {
		e.err = fmt.Errorf("column %s: the batch's is %s, want LowCardinality(String)", name, c.Type())
		return
	}
	e.pass++
	keys, dict := slices.Grow(e.keys[:0], len(e.rows))[:len(e.rows)], e.dict[:0]
	var last *lcValue
	for i := range e.rows {
		// Rows of a batch often repeat the row before's value: one
		// comparison instead of a lookup.
		if s := v(&e.rows[i]); last == nil || last.s != s {
			if last = e.values[s]; last == nil {
				last = &lcValue{s: strings.Clone(s)} // not the row's memory
				e.values[last.s] = last
			}
			if last.pass != e.pass {
				dict = append(dict, last)
				last.pass, last.idx = e.pass, uint32(len(dict))
			}
		}
		keys[i] = last.idx
	}
	var keyType, width uint64
	switch n := len(dict); { // the driver's choice: by the values appended, not the largest key
	case n < math.MaxUint8:
		keyType, width = 0, 1
	case n < math.MaxUint16:
		keyType, width = 1, 2
	case n < math.MaxUint32:
		keyType, width = 2, 4
	default:
		keyType, width = 3, 8
	}
	b := binary.LittleEndian.AppendUint64(e.buf, lcHasAdditionalKeys|lcUpdateDictionary|keyType)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(dict)+1))
	b = appendString(b, "")
	for _, d := range dict {
		b = appendString(b, d.s)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(keys)))
	for _, k := range keys {
		switch width {
		case 1:
			b = append(b, byte(k))
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(k))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, k)
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(k))
		}
	}
	e.buf, e.keys, e.dict = b, keys, dict
}

// dateTime64 writes a DateTime64(3) column: what the driver's column
// makes of a time.Time, milliseconds since the epoch, 0 for the zero time.
func (e *viewsEncoder) dateTime64(name string, v func(*viewcount.Verdict) time.Time) {
	c, ok := nextColumn[*column.DateTime64](e, name)
	if !ok {
		return
	}
	if t := string(c.Type()); t != "DateTime64(3)" && !strings.HasPrefix(t, "DateTime64(3,") {
		e.err = fmt.Errorf("column %s: the batch's is %s, want DateTime64(3)", name, t)
		return
	}
	b := e.buf
	for i := range e.rows {
		b = binary.LittleEndian.AppendUint64(b, uint64(chproto.ToDateTime64(v(&e.rows[i]), chproto.PrecisionMilli)))
	}
	e.buf = b
}

func (e *viewsEncoder) boolean(name string, v func(*viewcount.Verdict) bool) {
	if _, ok := nextColumn[*column.Bool](e, name); !ok {
		return
	}
	b := e.buf
	for i := range e.rows {
		b = append(b, b2u(v(&e.rows[i])))
	}
	e.buf = b
}

func (e *viewsEncoder) u8(name string, v func(*viewcount.Verdict) uint8) {
	if _, ok := nextColumn[*column.UInt8](e, name); !ok {
		return
	}
	b := e.buf
	for i := range e.rows {
		b = append(b, v(&e.rows[i]))
	}
	e.buf = b
}

func (e *viewsEncoder) i8(name string, v func(*viewcount.Verdict) int8) {
	if _, ok := nextColumn[*column.Int8](e, name); !ok {
		return
	}
	b := e.buf
	for i := range e.rows {
		b = append(b, byte(v(&e.rows[i])))
	}
	e.buf = b
}

func (e *viewsEncoder) u16(name string, v func(*viewcount.Verdict) uint16) {
	if _, ok := nextColumn[*column.UInt16](e, name); !ok {
		return
	}
	b := e.buf
	for i := range e.rows {
		b = binary.LittleEndian.AppendUint16(b, v(&e.rows[i]))
	}
	e.buf = b
}

func (e *viewsEncoder) u32(name string, v func(*viewcount.Verdict) uint32) {
	if _, ok := nextColumn[*column.UInt32](e, name); !ok {
		return
	}
	b := e.buf
	for i := range e.rows {
		b = binary.LittleEndian.AppendUint32(b, v(&e.rows[i]))
	}
	e.buf = b
}

func (e *viewsEncoder) i32(name string, v func(*viewcount.Verdict) int32) {
	if _, ok := nextColumn[*column.Int32](e, name); !ok {
		return
	}
	b := e.buf
	for i := range e.rows {
		b = binary.LittleEndian.AppendUint32(b, uint32(v(&e.rows[i])))
	}
	e.buf = b
}

func (e *viewsEncoder) u64(name string, v func(*viewcount.Verdict) uint64) {
	if _, ok := nextColumn[*column.UInt64](e, name); !ok {
		return
	}
	b := e.buf
	for i := range e.rows {
		b = binary.LittleEndian.AppendUint64(b, v(&e.rows[i]))
	}
	e.buf = b
}
