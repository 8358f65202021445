package migrations_test

import (
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Migration 024: views_raw chooses a merge once about 30 parts of a size
// wait, not 5, so its rows are rewritten fewer times (the merges had cost
// more CPU than the inserts); the setting is the table's, so it survives a
// restart and holds for the parts written before it.
func TestRawMergesLessEagerly(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	base := func() string {
		t.Helper()
		res, err := s.Query(ctx, "SELECT create_table_query FROM system.tables WHERE database = currentDatabase() AND name = 'views_raw'", nil)
		if err != nil || !res.Next() {
			t.Fatalf("views_raw: %v", err)
		}
		return res.String("create_table_query")
	}
	applyBefore(t, s, 24)
	if q := base(); strings.Contains(q, "merge_selector_base") {
		t.Fatalf("before 024 views_raw already sets merge_selector_base: %s", q)
	}
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	if q := base(); !strings.Contains(q, "merge_selector_base = 30") {
		t.Fatalf("after 024 views_raw's settings lack merge_selector_base = 30: %s", q)
	}
}
