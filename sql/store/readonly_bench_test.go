package store_test

import (
	"testing"

	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// BenchmarkReadOnlyQuery/checked is an analyst query on the read-only
// connection with its checks (the parse, the allow-lists, the printed
// text, the engine's EXPLAIN AST of it);
// /store is the same query through the store's own Query, for the cost
// of the checks.
func BenchmarkReadOnlyQuery(b *testing.B) {
	st := storetest.Open(b)
	if err := st.Exec(b.Context(), "CREATE TABLE t (x UInt64) ENGINE = MergeTree ORDER BY x", nil); err != nil {
		b.Fatal(err)
	}
	if err := st.Exec(b.Context(), "INSERT INTO t SELECT number FROM numbers(1000)", nil); err != nil {
		b.Fatal(err)
	}
	r, err := store.OpenReadOnly(st, store.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.Close() })
	const q = "SELECT x % 10 AS k, count() FROM t GROUP BY k ORDER BY k"
	b.Run("checked", func(b *testing.B) {
		for b.Loop() {
			cq, err := analyst.Check(q, r.Policy())
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := r.Query(b.Context(), cq, "TabSeparated", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.Query(b.Context(), q, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
