package store

import (
	"reflect"
	"strings"
	"testing"
)

func TestUnescapeTSV(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := unescapeTSV([]byte(in)); got != want {
			t.Errorf("unescapeTSV(%q) = %q, want %q", in, got, want)
		}
	}
	f("", "")
	f("plain", "plain")
	f(`a\tb`, "a\tb")
	f(`a\nb\rc`, "a\nb\rc")
	f(`back\\slash`, `back\slash`)
	f(`it\'s`, "it's")
	f(`nul\0`, "nul\x00")
	f(`\b\f\a\v\e`, "\b\f\a\v\x1b")
	f(`\N`, `\N`)  // NULL stays \N
	f(`\\N`, `\N`) // the string \N
	f(`x\N`, `xN`) // not NULL: an unknown escape is its character
	f(`trail\`, `trail\`)
	f("ü✓", "ü✓")
}

func TestParseTSVWithNames(t *testing.T) {
	f := func(in string, want *tsvTable) {
		t.Helper()
		got, err := parseTSVWithNames([]byte(in))
		if err != nil {
			t.Fatalf("parse %q: %v", in, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("parse %q = %#v, want %#v", in, got, want)
		}
	}
	f("", &tsvTable{})
	f("a\n", &tsvTable{Columns: []string{"a"}, Rows: [][]string{}})
	f("a\tb\n1\tx\\ty\n2\t\n", &tsvTable{Columns: []string{"a", "b"}, Rows: [][]string{{"1", "x\ty"}, {"2", ""}}})
	f("a\n1", &tsvTable{Columns: []string{"a"}, Rows: [][]string{{"1"}}})
	if _, err := parseTSVWithNames([]byte("a\tb\n1\n")); err == nil {
		t.Error("short row accepted")
	}
}

func FuzzParseTSVWithNames(f *testing.F) {
	f.Add([]byte("a\tb\n1\tx\\ty\n"))
	f.Add([]byte("\\N\t\\\\\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := parseTSVWithNames(b)
		if err != nil {
			return
		}
		for _, row := range res.Rows {
			if len(row) != len(res.Columns) {
				t.Fatalf("row %q has %d cells, %d columns", row, len(row), len(res.Columns))
			}
		}
	})
}

func TestCheckToken(t *testing.T) {
	for _, ok := range []string{"", "a", "p3:10-20", "A.b_c-9:0", strings.Repeat("x", 256)} {
		if err := checkToken(ok); err != nil {
			t.Errorf("checkToken(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{" ", "a b", "x'", `a\b`, "a;b", "ü", "a\n", strings.Repeat("x", 257)} {
		if err := checkToken(bad); err == nil {
			t.Errorf("checkToken(%q) accepted", bad)
		}
	}
}

func TestParamEscaper(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := paramEscaper.Replace(in); got != want {
			t.Errorf("escape(%q) = %q, want %q", in, got, want)
		}
	}
	f("plain 'q' {x:String}", "plain 'q' {x:String}")
	f("a\tb\nc\rd\x00e\\f", `a\tb\nc\rd\0e\\f`)
}

// TestTSVEngineErrorInOutput: chDB out of file descriptors wrote its
// exception into the result text; the error says so rather than naming a
// malformed row.
func TestTSVEngineErrorInOutput(t *testing.T) {
	out := "day\tverdict\tn\n2026-11-30\tvalid\t3\nCode: 24. DB::Exception: Cannot open file /d/x.bin, errno: 24, strerror: Too many open files. (CANNOT_OPEN_FILE)\n"
	_, err := parseTSVWithNames([]byte(out))
	if err == nil || !strings.Contains(err.Error(), "engine error in the output: Code: 24. DB::Exception: Cannot open file") {
		t.Fatalf("err = %v, want the engine's exception", err)
	}
	if _, err := parseTSVWithNames([]byte("a\tb\n1\n")); err == nil || !strings.Contains(err.Error(), "TSV row 1 has 1 cells") {
		t.Fatalf("a malformed row without an exception: %v", err)
	}
}
