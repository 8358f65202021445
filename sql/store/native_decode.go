package store

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/ClickHouse/ch-go/proto"
)

// decodeNative reads chDB's Native output: blocks, each the number of
// columns and rows, then every column whole (name, type, values), with no
// block info and no custom serialization (an output format speaks protocol
// revision 0). ch-go's proto decodes each block into typed columns, which
// are appended to the Result's. No output at all is an empty result whose
// columns are unknown: chDB writes no block for zero rows.
func decodeNative(buf []byte) (res *Result, err error) {
	// ch-go's decoders trust lengths and offsets (a huge one panics in
	// make); the engine's output is trusted too, but a garbled one must be
	// an error, not a crash of the service.
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("native output malformed: %v", p)
		}
	}()
	res = newResult(nil, nil)
	// proto.NewReader buffers; handing it a bufio.Reader of its size makes
	// it use that one, whose Peek says where the output ends.
	br := readers.Get().(*bufio.Reader)
	br.Reset(bytes.NewReader(buf))
	defer func() { br.Reset(nil); readers.Put(br) }()
	r := proto.NewReader(br)
	for blk := 0; ; blk++ {
		if _, err := br.Peek(1); err == io.EOF {
			break
		}
		var (
			b     proto.Block
			cols  proto.Results
			types []string
		)
		if err := b.DecodeRawBlock(r, 0, autoResult{&cols, &types}); err != nil {
			if msg := engineError(buf); msg != "" {
				return nil, fmt.Errorf("engine error in the output: %s", msg)
			}
			return nil, fmt.Errorf("native block %d: %w", blk, err)
		}
		if b.Columns == 0 {
			continue // an end-of-data marker
		}
		if len(res.Columns) == 0 {
			for _, c := range cols {
				res.Columns = append(res.Columns, c.Name)
				res.Types = append(res.Types, types[len(res.Types)])
			}
			res.cols = make([]resultColumn, len(cols))
		} else if len(cols) != len(res.cols) {
			return nil, fmt.Errorf("native block %d has %d columns, the first has %d", blk, len(cols), len(res.cols))
		}
		for j, c := range cols {
			if c.Name != res.Columns[j] || types[j] != res.Types[j] {
				return nil, fmt.Errorf("native block %d: column %d is %s %s, the first block's is %s %s", blk, j, c.Name, types[j], res.Columns[j], res.Types[j])
			}
			if err := res.cols[j].appendProto(c.Data, res.Types[j], b.Rows); err != nil {
				return nil, fmt.Errorf("native block %d: column %s: %w", blk, c.Name, err)
			}
		}
		res.n += b.Rows
	}
	return res, nil
}

// emptyResult is a result without rows whose columns are those DESCRIBE
// listed in out (none when out does not decode).
func emptyResult(out []byte) *Result {
	desc, err := decodeNative(out)
	res := newResult(nil, nil)
	if err != nil {
		return res
	}
	for desc.Next() {
		res.Columns = append(res.Columns, desc.String("name"))
		res.Types = append(res.Types, desc.String("type"))
	}
	if desc.Err() != nil {
		return newResult(nil, nil)
	}
	res.cols = make([]resultColumn, len(res.Columns))
	for j := range res.cols {
		res.cols[j].kind, res.cols[j].bits, _ = kindOf(res.Types[j])
	}
	return res
}

// readerSize is the size proto.NewReader asks of a bufio.Reader.
const readerSize = 128 << 10

var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readerSize) }}

// autoResult decodes a block like proto.Results.Auto, with the column types
// ch-go's inference lacks (Map of anything but strings) added.
type autoResult struct {
	s     *proto.Results
	types *[]string // as the engine spells them
}

func (a autoResult) DecodeResult(r *proto.Reader, _ int, b proto.Block) error {
	for i := 0; i < b.Columns; i++ {
		name, err := r.Str()
		if err != nil {
			return fmt.Errorf("column [%d] name: %w", i, err)
		}
		typ, err := r.Str()
		if err != nil {
			return fmt.Errorf("column [%d] type: %w", i, err)
		}
		col, err := inferColumn(proto.ColumnType(typ))
		if err != nil {
			return fmt.Errorf("column %s: %w", name, err)
		}
		if b.Rows > 0 {
			if s, ok := col.(proto.StateDecoder); ok {
				if err := s.DecodeState(r); err != nil {
					return fmt.Errorf("column %s state: %w", name, err)
				}
			}
			if err := col.DecodeColumn(r, b.Rows); err != nil {
				return fmt.Errorf("column %s: %w", name, err)
			}
		}
		*a.s = append(*a.s, proto.ResultColumn{Name: name, Data: col})
		*a.types = append(*a.types, typ)
	}
	return nil
}

func inferColumn(t proto.ColumnType) (proto.ColResult, error) {
	if in, ok := unwrap(string(t), "SimpleAggregateFunction("); ok {
		// Serialized as its argument type: (f, T).
		if _, typ, ok := strings.Cut(in, ","); ok {
			return inferColumn(proto.ColumnType(strings.TrimSpace(typ)))
		}
	}
	if t.Base() == "Map" {
		k, v, ok := strings.Cut(string(t.Elem()), ",")
		if !ok {
			return nil, fmt.Errorf("map type %q", t)
		}
		kc, err := inferColumn(proto.ColumnType(strings.TrimSpace(k)))
		if err != nil {
			return nil, err
		}
		vc, err := inferColumn(proto.ColumnType(strings.TrimSpace(v)))
		if err != nil {
			return nil, err
		}
		return &mapColumn{typ: t, keys: kc, values: vc}, nil
	}
	var c proto.ColAuto
	if err := c.Infer(t); err != nil {
		return nil, err
	}
	return c.Data, nil
}

// maxMapEntries bounds one map row, so a garbled offset is an error.
const maxMapEntries = 1 << 24

// mapColumn is a Map(K, V) column: row offsets, then every key, then every
// value. It is only read as text.
type mapColumn struct {
	typ          proto.ColumnType
	offsets      proto.ColUInt64
	keys, values proto.ColResult
}

func (m *mapColumn) Type() proto.ColumnType { return m.typ }
func (m *mapColumn) Rows() int              { return m.offsets.Rows() }
func (m *mapColumn) Reset()                 { m.offsets.Reset(); m.keys.Reset(); m.values.Reset() }

func (m *mapColumn) DecodeColumn(r *proto.Reader, rows int) error {
	if err := m.offsets.DecodeColumn(r, rows); err != nil {
		return err
	}
	var n uint64
	for i, o := range m.offsets {
		if o < n || o-n > maxMapEntries {
			return fmt.Errorf("map offsets: %d after %d in row %d", o, n, i+1)
		}
		n = o
	}
	if n > 0 {
		if err := m.keys.DecodeColumn(r, int(n)); err != nil {
			return err
		}
		return m.values.DecodeColumn(r, int(n))
	}
	return nil
}

// orderedMap is a map's row, its pairs in the engine's order.
type orderedMap [][2]any

// mapRow is row i of a map column as a Go map, for Text.
func (m *mapColumn) row(i int) (orderedMap, error) {
	start := 0
	if i > 0 {
		start = int(m.offsets[i-1])
	}
	out := make(orderedMap, 0, int(m.offsets[i])-start)
	for j := start; j < int(m.offsets[i]); j++ {
		k, err := rowValue(m.keys, j)
		if err != nil {
			return nil, err
		}
		v, err := rowValue(m.values, j)
		if err != nil {
			return nil, err
		}
		out = append(out, [2]any{k, v})
	}
	return out, nil
}

// rowValue is row i of any proto column, through its Row method.
func rowValue(c proto.ColResult, i int) (any, error) {
	if m, ok := c.(*mapColumn); ok {
		return m.row(i)
	}
	row := reflect.ValueOf(c).MethodByName("Row")
	if !row.IsValid() {
		return nil, fmt.Errorf("type %s has no rows to read", c.Type())
	}
	return row.Call([]reflect.Value{reflect.ValueOf(i)})[0].Interface(), nil
}

// appendProto appends the rows of a decoded proto column, converting them
// to the kind the column's type is held as.
func (c *resultColumn) appendProto(data proto.ColResult, typ string, rows int) error {
	k, bits, nullable := kindOf(typ)
	c.kind, c.bits = k, bits
	if nullable {
		if nc, ok := nullableParts(data); ok {
			for i := range rows {
				c.nulls = append(c.nulls, nc.nulls[i] == 1)
			}
			data = nc.values
		} else {
			c.nulls = append(c.nulls, make([]bool, rows)...)
		}
	} else if c.nulls != nil {
		c.nulls = append(c.nulls, make([]bool, rows)...)
	}
	switch k { // each column grows once a block
	case kindUint:
		c.u = slices.Grow(c.u, rows)
	case kindInt:
		c.i = slices.Grow(c.i, rows)
	case kindFloat:
		c.f = slices.Grow(c.f, rows)
	case kindString:
		c.s = slices.Grow(c.s, rows)
	case kindTime:
		c.t = slices.Grow(c.t, rows)
	}
	switch k {
	case kindUint:
		switch d := data.(type) {
		case *proto.ColUInt64:
			c.u = append(c.u, *d...)
			return nil
		case *proto.ColUInt32:
			c.u = appendWide(c.u, *d)
			return nil
		case *proto.ColUInt16:
			c.u = appendWide(c.u, *d)
			return nil
		case *proto.ColUInt8:
			c.u = appendWide(c.u, *d)
			return nil
		case proto.ColumnOf[uint64]:
			return appendRows(&c.u, d, rows, func(v uint64) uint64 { return v })
		case proto.ColumnOf[uint32]:
			return appendRows(&c.u, d, rows, func(v uint32) uint64 { return uint64(v) })
		case proto.ColumnOf[uint16]:
			return appendRows(&c.u, d, rows, func(v uint16) uint64 { return uint64(v) })
		case proto.ColumnOf[uint8]:
			return appendRows(&c.u, d, rows, func(v uint8) uint64 { return uint64(v) })
		}
	case kindInt:
		switch d := data.(type) {
		case *proto.ColInt64:
			c.i = append(c.i, *d...)
			return nil
		case *proto.ColInt32:
			c.i = appendWide(c.i, *d)
			return nil
		case proto.ColumnOf[int64]:
			return appendRows(&c.i, d, rows, func(v int64) int64 { return v })
		case proto.ColumnOf[int32]:
			return appendRows(&c.i, d, rows, func(v int32) int64 { return int64(v) })
		case proto.ColumnOf[int16]:
			return appendRows(&c.i, d, rows, func(v int16) int64 { return int64(v) })
		case proto.ColumnOf[int8]:
			return appendRows(&c.i, d, rows, func(v int8) int64 { return int64(v) })
		}
	case kindFloat:
		switch d := data.(type) {
		case proto.ColumnOf[float64]:
			return appendRows(&c.f, d, rows, func(v float64) float64 { return v })
		case proto.ColumnOf[float32]:
			return appendRows(&c.f, d, rows, func(v float32) float64 { return float64(v) })
		}
	case kindString:
		switch d := data.(type) {
		case *proto.ColStr:
			c.s = appendStrings(c.s, d)
			return nil
		case proto.ColumnOf[string]:
			return appendRows(&c.s, d, rows, func(v string) string { return v })
		}
		return appendAny(&c.s, data, rows, func(v any) string { return fmt.Sprint(v) })
	case kindBool:
		if d, ok := data.(proto.ColumnOf[bool]); ok {
			return appendRows(&c.b, d, rows, func(v bool) bool { return v })
		}
	case kindTime:
		switch d := data.(type) {
		case *proto.ColDateTime:
			loc := d.Location
			if loc == nil {
				loc = time.Local // the engine's zone: chDB runs in this process
			}
			for _, v := range d.Data {
				c.t = append(c.t, time.Unix(int64(v), 0).In(loc))
			}
			return nil
		case proto.ColumnOf[time.Time]:
			return appendRows(&c.t, d, rows, func(v time.Time) time.Time { return v })
		}
	case kindStrings:
		if d, ok := data.(proto.ColumnOf[[]string]); ok {
			return appendRows(&c.a, d, rows, func(v []string) []string { return v })
		}
	case kindOther:
		return appendAny(&c.other, data, rows, func(v any) any { return v })
	}
	return fmt.Errorf("type %s decoded as %T", typ, data)
}

type nullParts struct {
	nulls  proto.ColUInt8
	values proto.ColResult
}

// nullableParts splits a proto.ColNullable[T] of any T.
func nullableParts(data proto.ColResult) (nullParts, bool) {
	v := reflect.ValueOf(data)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nullParts{}, false
	}
	n, vals := v.Elem().FieldByName("Nulls"), v.Elem().FieldByName("Values")
	if !n.IsValid() || !vals.IsValid() {
		return nullParts{}, false
	}
	nulls, ok1 := n.Interface().(proto.ColUInt8)
	values, ok2 := vals.Interface().(proto.ColResult)
	return nullParts{nulls, values}, ok1 && ok2
}

func appendWide[T uint8 | uint16 | uint32 | int32, W uint64 | int64](dst []W, src []T) []W {
	for _, v := range src {
		dst = append(dst, W(v))
	}
	return dst
}

func appendRows[T, W any](dst *[]W, src proto.ColumnOf[T], rows int, conv func(T) W) error {
	if src.Rows() != rows {
		return fmt.Errorf("%d rows, the block has %d", src.Rows(), rows)
	}
	for i := range rows {
		*dst = append(*dst, conv(src.Row(i)))
	}
	return nil
}

func appendAny[W any](dst *[]W, src proto.ColResult, rows int, conv func(any) W) error {
	for i := range rows {
		v, err := rowValue(src, i)
		if err != nil {
			return err
		}
		*dst = append(*dst, conv(v))
	}
	return nil
}

// appendStrings appends a String column's values as substrings of its
// buffer, with no copy: each block decodes into columns of its own, which
// nothing reuses or writes to afterwards, so the buffer can be the strings'.
func appendStrings(dst []string, c *proto.ColStr) []string {
	if len(c.Buf) == 0 {
		for range c.Pos {
			dst = append(dst, "")
		}
		return dst
	}
	all := unsafe.String(&c.Buf[0], len(c.Buf))
	for _, p := range c.Pos {
		dst = append(dst, all[p.Start:p.End])
	}
	return dst
}
