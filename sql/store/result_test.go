package store_test

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestResultTypes reads every type the named queries return, and their
// NULL, LowCardinality and time-zone variants, from chDB's Native output:
// the typed value, the text as TSV printed it, and the accessor errors.
func TestResultTypes(t *testing.T) {
	s := storetest.Open(t)
	res := mustQuery(t, s, `SELECT toUInt8(200) u8, toUInt16(65535) u16, toUInt32(4000000000) u32, toUInt64(18446744073709551615) u64,
		toInt8(-8) i8, toInt32(-5) i32, toInt64(-9000000000) i64, toFloat32(0.1) f32, 1.5 f64, true b, 'x\ty' s,
		toLowCardinality('lc') lc, CAST(NULL, 'Nullable(String)') ns, CAST(3, 'Nullable(UInt64)') nu, NULL nothing,
		['a','it''s'] arr, [toLowCardinality('q')] alc, map('k', toUInt64(1)) m,
		toDateTime('2024-01-01 10:00:00', 'UTC') dt, toDateTime64('2024-01-01 00:00:00.123', 3, 'Europe/Berlin') dt64,
		toDate('2024-01-02') d, CAST('a', 'Enum8(\'a\' = 1)') e`, nil)
	if got, want := strings.Join(res.Columns, " "), "u8 u16 u32 u64 i8 i32 i64 f32 f64 b s lc ns nu nothing arr alc m dt dt64 d e"; got != want {
		t.Fatalf("columns %s, want %s", got, want)
	}
	if !res.Next() {
		t.Fatalf("no row: %v", res.Err())
	}
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", name, got, want)
		}
	}
	check("u8", res.Uint64("u8"), uint64(200))
	check("u16", res.Uint16("u16"), uint16(65535))
	check("u32", res.Uint32("u32"), uint32(4000000000))
	check("u64", res.Uint64("u64"), uint64(18446744073709551615))
	check("i8", res.Int64("i8"), int64(-8))
	check("i32", res.Int("i32"), -5)
	check("i64", res.Int64("i64"), int64(-9000000000))
	check("u32 as int64", res.Int64("u32"), int64(4000000000))
	check("f32", res.Float64("f32"), float64(float32(0.1)))
	check("f64", res.Float64("f64"), 1.5)
	check("b", res.Bool("b"), true)
	check("s", res.String("s"), "x\ty")
	check("lc", res.String("lc"), "lc")
	check("ns null", res.IsNull("ns"), true)
	check("nu", res.Uint64("nu"), uint64(3))
	check("nu null", res.IsNull("nu"), false)
	check("arr", res.Strings("arr"), []string{"a", "it's"})
	check("alc", res.Strings("alc"), []string{"q"})
	check("dt", res.Time("dt").Equal(time.Date(2024, 1, 1, 10, 0, 0, 0, time.UTC)), true)
	check("dt64", res.Time("dt64").Equal(time.Date(2023, 12, 31, 23, 0, 0, 123e6, time.UTC)), true)
	check("d", res.Time("d").Equal(time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)), true)
	check("e", res.String("e"), "a")
	if err := res.Err(); err != nil {
		t.Fatalf("exact reads failed: %v", err)
	}
	want := []string{"200", "65535", "4000000000", "18446744073709551615", "-8", "-5", "-9000000000", "0.1", "1.5", "true", "x\ty",
		"lc", `\N`, "3", `\N`, "['a','it''s']", "['q']", "{'k':1}", "2024-01-01 10:00:00", "2024-01-01 00:00:00.123", "2024-01-02", "a"}
	want[15] = `['a','it\'s']`
	check("text", res.TextRows()[0], want)

	// Every way to read wrong is an error, and the first one is kept.
	bad := func(read func(*store.Result), want string) {
		t.Helper()
		res.Reset()
		res.Next()
		read(res)
		if err := res.Err(); err == nil || !errors.Is(err, store.ErrColumn) || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want ErrColumn with %q", err, want)
		}
		if res.Next() {
			t.Error("Next after an error")
		}
	}
	bad(func(r *store.Result) { r.Uint64("nope") }, `"nope": no such column`)
	bad(func(r *store.Result) { r.Uint64("s") }, `"s": String, not unsigned integer`)
	bad(func(r *store.Result) { r.String("u8") }, `"u8": UInt8, not string`)
	bad(func(r *store.Result) { r.String("ns") }, `"ns": NULL`)
	bad(func(r *store.Result) { r.Uint64("i8") }, `-8 is negative`)
	bad(func(r *store.Result) { r.Uint16("u32") }, `overflows uint16`)
	bad(func(r *store.Result) { r.Int64("u64") }, `overflows int64`)
	bad(func(r *store.Result) { r.Time("s"); r.Uint64("nope") }, `"s": String, not time`)

	// No rows: chDB writes no block, so there are no columns either, and
	// nothing to read.
	empty := mustQuery(t, s, "SELECT number FROM numbers(3) WHERE number > 10", nil)
	if empty.Len() != 0 || empty.Next() || empty.Err() != nil {
		t.Errorf("empty result: %d rows, err %v", empty.Len(), empty.Err())
	}
}

// TestResultManyBlocks: a result of several Native blocks reads as one.
func TestResultManyBlocks(t *testing.T) {
	s := storetest.Open(t)
	res := mustQuery(t, s, "SELECT number n, toString(number) s FROM numbers(200000)", nil)
	if res.Len() != 200000 {
		t.Fatalf("%d rows", res.Len())
	}
	var i uint64
	for res.Next() {
		if n, str := res.Uint64("n"), res.String("s"); n != i || str != strconv.FormatUint(i, 10) {
			t.Fatalf("row %d: %d %q", i, n, str)
		}
		i++
	}
	if res.Err() != nil || i != 200000 {
		t.Fatalf("read %d rows: %v", i, res.Err())
	}
}

// TestResultRoundTrip is a property test: random values bound as typed
// parameters come back exactly through the engine's Native output, typed
// and as text.
func TestResultRoundTrip(t *testing.T) {
	s := storetest.Open(t)
	rng := rand.New(rand.NewPCG(1, 2))
	str := func() string {
		const alphabet = "ab'\\\t\n\x00ü✓ ,[]{}"
		r := []rune(alphabet)
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteRune(r[rng.IntN(len(r))])
		}
		return b.String()
	}
	type row struct {
		U   uint64    `ch:"u"`
		I   int64     `ch:"i"`
		S   string    `ch:"s"`
		A   []string  `ch:"a"`
		T   time.Time `ch:"t"`
		N   *uint32   `ch:"n"`
		B   bool      `ch:"b"`
		F   float64   `ch:"f"`
		LC  string    `ch:"lc"`
		Sub uint16    `ch:"sub"`
	}
	for range 200 {
		want := row{U: rng.Uint64(), I: rng.Int64() - 1<<62, S: str(), T: time.UnixMilli(rng.Int64N(4e12)).UTC(),
			B: rng.IntN(2) == 1, F: rng.NormFloat64() * 1e6, LC: str(), Sub: uint16(rng.Uint32())}
		for range rng.IntN(4) {
			want.A = append(want.A, str())
		}
		if want.A == nil {
			want.A = []string{}
		}
		p := store.Params{"u": strconv.FormatUint(want.U, 10), "i": strconv.FormatInt(want.I, 10), "s": want.S,
			"a": store.ArrayParam(want.A), "t": want.T.Format("2006-01-02 15:04:05.000"), "b": strconv.FormatBool(want.B),
			"f": strconv.FormatFloat(want.F, 'g', -1, 64), "lc": want.LC, "sub": strconv.Itoa(int(want.Sub)), "n": "0"}
		if rng.IntN(2) == 1 {
			n := rng.Uint32() | 1
			want.N, p["n"] = &n, strconv.FormatUint(uint64(n), 10)
		}
		got, err := store.Select[row](t.Context(), s, `SELECT {u:UInt64} u, {i:Int64} i, {s:String} s, {a:Array(String)} a,
			{t:DateTime64(3, 'UTC')} t, nullIf({n:UInt32}, 0) n, {b:Bool} b, {f:Float64} f, toLowCardinality({lc:String}) lc, {sub:UInt16} sub`, p)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if len(got) == 1 {
			if loc := got[0].T.Location(); loc.String() != "UTC" {
				t.Fatalf("t in %s, want the column's UTC", loc)
			}
			got[0].T = got[0].T.UTC() // UTC loaded by name is not time.UTC
			if len(got[0].A) == 0 {
				got[0].A = []string{}
			}
		}
		if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Fatalf("got %#v\nwant %#v", got, want)
		}
	}
}

func TestSelectChecksTheRowType(t *testing.T) {
	s := storetest.Open(t)
	f := func(row any, q, want string) {
		t.Helper()
		res := mustQuery(t, s, q, nil)
		err := store.CheckRow(row, res.Columns, res.Types)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckRow(%T, %q) = %v, want %q", row, q, err, want)
		}
	}
	type ok struct {
		Views uint64 `ch:"views"`
		Page  string `ch:"page"`
	}
	f(ok{}, "SELECT toUInt64(1) views, 'p' page", "")
	f(ok{}, "SELECT toUInt64(1) views, 'p' page, 1 extra", "no field for column(s) extra")
	f(ok{}, "SELECT toUInt64(1) views", `no column "page"`)
	f(ok{}, "SELECT 'x' views, 'p' page", "column views is String, the field uint64 cannot hold it")
	f(ok{}, "SELECT toInt64(1) views, 'p' page", "column views is Int64")
	f(ok{}, "SELECT toUInt64(1) views, CAST('p', 'Nullable(String)') page", "must be a pointer")

	// A row type embedding another's reads its columns too (explain_event
	// is revalidate_events and three more), in CheckRow and in Select.
	type more struct {
		ok
		Rules string `ch:"rules"`
	}
	f(more{}, "SELECT toUInt64(1) views, 'p' page, 'r' rules", "")
	f(more{}, "SELECT 'r' rules", `no column "views"`)
	rows, err := store.Select[more](t.Context(), s, "SELECT toUInt64(7) views, 'p' page, 'r' rules", nil)
	if err != nil || len(rows) != 1 || rows[0] != (more{ok{7, "p"}, "r"}) {
		t.Errorf("Select of an embedding row type = %+v, %v", rows, err)
	}
}
