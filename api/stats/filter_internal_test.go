package stats

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzFilter: whatever a filter parameter holds, parsing it never panics
// and either refuses it as a bad "filter" parameter or gives a filter on
// a known dimension whose values are non-empty text within the bounds; a
// filter written back from its values (escapeValue) reads the same.
func FuzzFilter(f *testing.F) {
	for _, s := range []string{"country==DE", "page~/blog|/docs", `utm_campaign!=a\|b|c\\`, "os!~x", "referrer==(direct)",
		"page==/a/b/", "x==", "country", "==DE", `page==\`, "browser==\x00", "page!=" + strings.Repeat("é", 1100)} {
		f.Add(s)
	}
	norm := func(s string) (string, error) {
		if !strings.HasPrefix(s, "/") {
			return "", errors.New("a page starts with /")
		}
		return strings.TrimSuffix(s, "/"), nil
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := parseFilters([]string{s}, norm)
		if err != nil {
			var pe *errParam
			if !errors.As(err, &pe) || pe.param != "filter" {
				t.Fatalf("%q: %v, want a filter parameter error", s, err)
			}
			return
		}
		flt := fs[0]
		if _, ok := filterDims[flt.dim]; !ok || len(flt.values) == 0 || len(flt.values) > maxFilterValues {
			t.Fatalf("%q: %+v", s, flt)
		}
		for _, v := range flt.values {
			if len(v) > maxFilterValue || !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				t.Fatalf("%q: value %q", s, v)
			}
		}
		if flt.op == opContains || flt.op == opNotContains {
			var esc []string
			for _, v := range flt.values {
				esc = append(esc, escapeValue(v))
			}
			op := "~"
			if flt.op == opNotContains {
				op = "!~"
			}
			again, err := parseFilters([]string{flt.dim + op + strings.Join(esc, "|")}, norm)
			if err != nil || !slices.Equal(again[0].values, flt.values) {
				t.Fatalf("%q: values %q read back as %v %v", s, flt.values, again, err)
			}
		}
		sl := slots(fs)[flt.dim]
		if !sl.on {
			t.Fatalf("%q: slot off", s)
		}
	})
}

// TestSlots: filters on one dimension fold into one test as AND: is-lists
// intersect, is-not and does-not-contain lists unite.
func TestSlots(t *testing.T) {
	fs, err := parseFilters([]string{"os==Linux|Mac OS|Windows", "os==Windows|Linux|iOS", "os!=Mac OS", "os!=Android", "os!~bsd", "os!~x", "os~in"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := slots(fs)["os"]
	if !s.inOn || !slices.Equal(s.in, []string{"Linux", "Windows"}) || !slices.Equal(s.out, []string{"Android", "Mac OS"}) ||
		!slices.Equal(s.hasNot, []string{"bsd", "x"}) || !slices.Equal(s.has, []string{"in"}) {
		t.Errorf("%+v", s)
	}
	// Disjoint is-lists pass nothing, and still filter (inOn).
	fs, _ = parseFilters([]string{"os==Linux", "os==iOS"}, nil)
	if s := slots(fs)["os"]; !s.inOn || len(s.in) != 0 {
		t.Errorf("%+v", s)
	}
}
