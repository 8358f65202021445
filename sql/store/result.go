package store

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
)

// Result is a query's output as typed columns, read a row at a time by
// column name:
//
//	for res.Next() {
//		out = append(out, pageCount{Page: res.String("page"), Views: res.Uint64("views")})
//	}
//	if err := res.Err(); err != nil { … }
//
// An accessor never guesses: an unknown column, a value of another type
// (a String read as Uint64), a NULL read as a value or a number that does
// not fit makes it return the zero value and keeps the first such error
// for Err, and Next then stops. So a row that reads wrong is an error, never
// a silent zero. Select[T] scans into a struct by `ch:"name"` tags instead.
//
// A Result is not safe for concurrent use (it is its own cursor). Columns
// and Types are known whenever the engine sent a block; chDB sends none for
// an empty result, so both may then be empty.
type Result struct {
	Columns []string // names, in the query's order
	Types   []string // ClickHouse types, as the engine spells them
	cols    []resultColumn
	n       int // rows
	row     int // the cursor: -1 before the first Next
	err     error
}

// kind is how a column's values are held, whatever their width.
type kind uint8

const (
	kindOther   kind = iota // kept as Go values, read only as text
	kindUint                // UInt8…UInt64
	kindInt                 // Int8…Int64, Enum
	kindFloat               // Float32, Float64
	kindString              // String, FixedString, Enum, UUID, IPs
	kindBool                // Bool
	kindTime                // Date, Date32, DateTime, DateTime64
	kindStrings             // Array(String)
)

func (k kind) String() string {
	return [...]string{"other", "unsigned integer", "integer", "float", "string", "bool", "time", "array of strings"}[k]
}

// column holds one column's values in the slice of its kind.
type resultColumn struct {
	kind  kind
	bits  int    // width of a number, for Text and range checks
	nulls []bool // nil unless Nullable
	u     []uint64
	i     []int64
	f     []float64
	s     []string
	b     []bool
	t     []time.Time
	a     [][]string
	other []any
}

func (c *resultColumn) isNull(i int) bool { return c.nulls != nil && c.nulls[i] }

// newResult is an empty result with the given columns.
func newResult(names, types []string) *Result {
	return &Result{Columns: names, Types: types, cols: make([]resultColumn, len(names)), row: -1}
}

// Len is the number of rows.
func (r *Result) Len() int { return r.n }

// Next moves to the next row; false after the last one or once an accessor
// failed. Err says which.
func (r *Result) Next() bool {
	if r.err != nil || r.row+1 >= r.n {
		r.row = r.n
		return false
	}
	r.row++
	return true
}

// Err is the first error an accessor met, nil when every read was exact.
func (r *Result) Err() error { return r.err }

// Reset moves the cursor before the first row again and clears Err.
func (r *Result) Reset() { r.row, r.err = -1, nil }

func (r *Result) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// ErrColumn is wrapped by every accessor error: an unknown column, a value
// of another type, a NULL, an overflow.
var ErrColumn = errors.New("store: result column")

// cell finds the column name at the cursor, checking its kind is one of want.
func (r *Result) cell(name string, want ...kind) (*resultColumn, int, bool) {
	if r.err != nil {
		return nil, 0, false
	}
	if r.row < 0 || r.row >= r.n {
		r.fail(fmt.Errorf("%w %q: no current row (call Next)", ErrColumn, name))
		return nil, 0, false
	}
	j := r.index(name)
	if j < 0 {
		r.fail(fmt.Errorf("%w %q: no such column in (%s)", ErrColumn, name, strings.Join(r.Columns, ", ")))
		return nil, 0, false
	}
	c := &r.cols[j]
	if !slicesContains(want, c.kind) {
		r.fail(fmt.Errorf("%w %q: %s, not %s", ErrColumn, name, r.Types[j], want[0]))
		return nil, 0, false
	}
	if c.isNull(r.row) {
		r.fail(fmt.Errorf("%w %q: NULL in row %d", ErrColumn, name, r.row+1))
		return nil, 0, false
	}
	return c, r.row, true
}

func slicesContains(ks []kind, k kind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// index is the position of the column name, -1 when there is none. Results
// have a handful of columns, so a scan beats a map.
func (r *Result) index(name string) int {
	for j, c := range r.Columns {
		if c == name {
			return j
		}
	}
	return -1
}

// Has reports whether the result has a column name.
func (r *Result) Has(name string) bool { return r.index(name) >= 0 }

// IsNull reports whether the column name is NULL in the current row.
func (r *Result) IsNull(name string) bool {
	j := r.index(name)
	if j < 0 || r.row < 0 || r.row >= r.n {
		r.fail(fmt.Errorf("%w %q: no such column or row", ErrColumn, name))
		return false
	}
	return r.cols[j].isNull(r.row)
}

// Uint64 reads an unsigned column, or a signed one holding no negative.
func (r *Result) Uint64(name string) uint64 {
	c, i, ok := r.cell(name, kindUint, kindInt)
	if !ok {
		return 0
	}
	if c.kind == kindInt {
		if c.i[i] < 0 {
			r.fail(fmt.Errorf("%w %q: %d is negative", ErrColumn, name, c.i[i]))
			return 0
		}
		return uint64(c.i[i])
	}
	return c.u[i]
}

// Uint32 reads an integer column that must fit 32 bits.
func (r *Result) Uint32(name string) uint32 {
	v := r.Uint64(name)
	if v > math.MaxUint32 {
		r.fail(fmt.Errorf("%w %q: %d overflows uint32", ErrColumn, name, v))
		return 0
	}
	return uint32(v)
}

// Uint16 reads an integer column that must fit 16 bits.
func (r *Result) Uint16(name string) uint16 {
	v := r.Uint64(name)
	if v > math.MaxUint16 {
		r.fail(fmt.Errorf("%w %q: %d overflows uint16", ErrColumn, name, v))
		return 0
	}
	return uint16(v)
}

// Uint8 reads an integer column that must fit 8 bits.
func (r *Result) Uint8(name string) uint8 {
	v := r.Uint64(name)
	if v > math.MaxUint8 {
		r.fail(fmt.Errorf("%w %q: %d overflows uint8", ErrColumn, name, v))
		return 0
	}
	return uint8(v)
}

// Int64 reads a signed column, or an unsigned one below 2⁶³.
func (r *Result) Int64(name string) int64 {
	c, i, ok := r.cell(name, kindInt, kindUint)
	if !ok {
		return 0
	}
	if c.kind == kindUint {
		if c.u[i] > math.MaxInt64 {
			r.fail(fmt.Errorf("%w %q: %d overflows int64", ErrColumn, name, c.u[i]))
			return 0
		}
		return int64(c.u[i])
	}
	return c.i[i]
}

// Int reads an integer column as an int.
func (r *Result) Int(name string) int {
	v := r.Int64(name)
	if v > math.MaxInt || v < math.MinInt {
		r.fail(fmt.Errorf("%w %q: %d overflows int", ErrColumn, name, v))
		return 0
	}
	return int(v)
}

// Float64 reads a Float column.
func (r *Result) Float64(name string) float64 {
	c, i, ok := r.cell(name, kindFloat)
	if !ok {
		return 0
	}
	return c.f[i]
}

// String reads a String (or FixedString, Enum, UUID) column.
func (r *Result) String(name string) string {
	c, i, ok := r.cell(name, kindString)
	if !ok {
		return ""
	}
	return c.s[i]
}

// Bool reads a Bool column.
func (r *Result) Bool(name string) bool {
	c, i, ok := r.cell(name, kindBool)
	if !ok {
		return false
	}
	return c.b[i]
}

// Time reads a Date or DateTime column, in the column's time zone.
func (r *Result) Time(name string) time.Time {
	c, i, ok := r.cell(name, kindTime)
	if !ok {
		return time.Time{}
	}
	return c.t[i]
}

// Strings reads an Array(String) column. The slice is the result's: do not
// modify it.
func (r *Result) Strings(name string) []string {
	c, i, ok := r.cell(name, kindStrings)
	if !ok {
		return nil
	}
	return c.a[i]
}

// Text prints the column name of the current row the way ClickHouse prints
// it in TSV (unescaped): digits, "2006-01-02 15:04:05", true/false,
// ['a','b'], and NULL as \N. For values shown as they are, never to parse.
func (r *Result) Text(name string) string {
	j := r.index(name)
	if r.err != nil {
		return ""
	}
	if j < 0 || r.row < 0 || r.row >= r.n {
		r.fail(fmt.Errorf("%w %q: no such column or row", ErrColumn, name))
		return ""
	}
	return r.cellText(j, r.row)
}

// TextRows is the whole result as text, a row of cells per row, each cell
// as Text prints it: for tests that compare output and for tools that show
// it. It does not move the cursor.
func (r *Result) TextRows() [][]string {
	out := make([][]string, r.n)
	for i := range out {
		row := make([]string, len(r.cols))
		for j := range row {
			row[j] = r.cellText(j, i)
		}
		out[i] = row
	}
	return out
}

func (r *Result) cellText(j, i int) string {
	c := &r.cols[j]
	if c.isNull(i) {
		return `\N`
	}
	return formatCell(reflect.ValueOf(c.value(i)), r.Types[j])
}

// value is the cell as a Go value of its kind.
func (c *resultColumn) value(i int) any {
	switch c.kind {
	case kindUint:
		return c.u[i]
	case kindInt:
		return c.i[i]
	case kindFloat:
		if c.bits == 32 {
			return float32(c.f[i])
		}
		return c.f[i]
	case kindString:
		return c.s[i]
	case kindBool:
		return c.b[i]
	case kindTime:
		return c.t[i]
	case kindStrings:
		return c.a[i]
	}
	return c.other[i]
}

// kindOf is the kind a ClickHouse type is held as, and a number's width.
func kindOf(typ string) (k kind, bits int, nullable bool) {
	t := strings.TrimSpace(typ)
	for {
		if in, ok := unwrap(t, "Nullable("); ok {
			t, nullable = in, true
			continue
		}
		if in, ok := unwrap(t, "LowCardinality("); ok {
			t = in
			continue
		}
		if in, ok := unwrap(t, "SimpleAggregateFunction("); ok {
			if _, arg, ok := strings.Cut(in, ","); ok {
				t = strings.TrimSpace(arg)
				continue
			}
		}
		break
	}
	switch {
	case t == "UInt8", t == "UInt16", t == "UInt32", t == "UInt64":
		return kindUint, atoiBits(t[4:]), nullable
	case t == "Int8", t == "Int16", t == "Int32", t == "Int64":
		return kindInt, atoiBits(t[3:]), nullable
	case t == "Float32", t == "Float64":
		return kindFloat, atoiBits(t[5:]), nullable
	case t == "String", strings.HasPrefix(t, "FixedString("), strings.HasPrefix(t, "Enum8("),
		strings.HasPrefix(t, "Enum16("), t == "UUID", t == "IPv4", t == "IPv6":
		return kindString, 0, nullable
	case t == "Bool":
		return kindBool, 0, nullable
	case t == "Date", t == "Date32", t == "DateTime", strings.HasPrefix(t, "DateTime("), strings.HasPrefix(t, "DateTime64("):
		return kindTime, 0, nullable
	}
	if in, ok := unwrap(t, "Array("); ok {
		if k, _, n := kindOf(in); k == kindString && !n {
			return kindStrings, 0, nullable
		}
	}
	return kindOther, 0, nullable
}

func unwrap(t, prefix string) (string, bool) {
	if strings.HasPrefix(t, prefix) && strings.HasSuffix(t, ")") {
		return t[len(prefix) : len(t)-1], true
	}
	return t, false
}

func atoiBits(s string) int {
	switch s {
	case "8":
		return 8
	case "16":
		return 16
	case "32":
		return 32
	}
	return 64
}
