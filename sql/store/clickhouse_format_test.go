package store

import (
	"math"
	"net"
	"reflect"
	"testing"
	"time"
)

// formatCell must print what ClickHouse prints in TSV, so both adapters
// return the same text for the same row.
func TestFormatCell(t *testing.T) {
	f := func(v any, dbType, want string) {
		t.Helper()
		p := reflect.New(reflect.TypeOf(v))
		p.Elem().Set(reflect.ValueOf(v))
		if got := formatCell(p.Elem(), dbType); got != want {
			t.Errorf("formatCell(%#v, %s) = %q, want %q", v, dbType, got, want)
		}
	}
	ts := time.Date(2024, 2, 29, 23, 59, 58, 123_000_000, time.UTC)
	var nilStr *string
	s := "x\ty"
	f(uint64(math.MaxUint64), "UInt64", "18446744073709551615")
	f(int8(-5), "Int8", "-5")
	f(true, "Bool", "true")
	f("a\tb", "String", "a\tb")
	f(&s, "Nullable(String)", "x\ty")
	f(nilStr, "Nullable(String)", `\N`)
	f(0.25, "Float64", "0.25")
	f(float32(0.1), "Float32", "0.1")
	f(1e20, "Float64", "100000000000000000000")
	f(1e-7, "Float64", "1e-7")
	f(-2.5e25, "Float64", "-2.5e25")
	f(math.Inf(-1), "Float64", "-inf")
	f(math.NaN(), "Float64", "nan")
	f(ts, "DateTime('UTC')", "2024-02-29 23:59:58")
	f(ts, "DateTime64(3, 'UTC')", "2024-02-29 23:59:58.123")
	f(ts, "DateTime64(6)", "2024-02-29 23:59:58.123000")
	f(ts, "Date", "2024-02-29")
	f(ts, "Nullable(Date32)", "2024-02-29")
	f([]string{"a", "it's"}, "Array(String)", `['a','it\'s']`)
	f([]uint64{1, 2}, "Array(UInt64)", "[1,2]")
	f(map[string]uint64{"k": 1}, "Map(String, UInt64)", "{'k':1}")
	f(net.IPv4(10, 0, 0, 1).To4(), "IPv4", "10.0.0.1")
}
