package store_test

import (
	"strconv"
	"testing"

	"github.com/viewcount/viewcount/sql/store"
)

// TestArrayParam: every tricky string comes back from an Array(String)
// parameter as it went in, quotes and backslashes included (quoted with \'
// instead, a page with an apostrophe failed its whole batch with "Cannot
// read array from text"). The server adapter runs when CLICKHOUSE_TEST_DSN
// is set.
func TestArrayParam(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := open(t)
		vals := append([]string{`'`, `\'`, `''`, `\\'`, `a\`, `it's\back`}, tricky...)
		res, err := s.Query(t.Context(), "SELECT arrayJoin({a:Array(String)}) AS v, length(v) AS n",
			store.Params{"a": store.ArrayParam(vals)})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.TextRows()) != len(vals) {
			t.Fatalf("%d values back, want %d", len(res.TextRows()), len(vals))
		}
		for i, row := range res.TextRows() {
			if row[0] != vals[i] || row[1] != strconv.Itoa(len(vals[i])) {
				t.Errorf("value %d: %q (length %s) came back, want %q", i, row[0], row[1], vals[i])
			}
		}
	})
}
