package storetest_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestMigratedIsApplied: a Migrated database is the one migrations.Apply
// makes of a new one, so tests that start from it test the schema that
// ships: every table and view with the engine's own CREATE statement (its
// database's name aside), the same schema_migrations rows, Apply a no-op on
// it, and a view inserted flowing through its materialized views into the
// rollups as in an applied database.
func TestMigratedIsApplied(t *testing.T) {
	applied := storetest.Open(t)
	if err := migrations.Apply(t.Context(), applied, nil); err != nil {
		t.Fatal(err)
	}
	copied := storetest.Migrated(t)
	if err := migrations.Apply(t.Context(), copied, nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT name, engine, replaceAll(create_table_query, currentDatabase() || '.', '') FROM system.tables WHERE database = currentDatabase() ORDER BY name",
		"SELECT name, type, position, default_kind, default_expression, compression_codec FROM system.columns WHERE database = currentDatabase() ORDER BY table, position",
		"SELECT version, name FROM schema_migrations ORDER BY version",
	} {
		want, got := rows(t, applied, q), rows(t, copied, q)
		if len(want) < 2 {
			t.Fatalf("%s: %d rows in the applied database: nothing to compare", q, len(want))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n copied  %q\n applied %q", q, got, want)
		}
	}

	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rowsOf := []viewcount.Verdict{{Event: viewcount.Event{Time: at, Site: "a.example", Page: "/p", UA: "Mozilla/5.0", Visitor: 1, Source: viewcount.SourcePixel},
		Reason: viewcount.Valid, Seq: 1, Visit: viewcount.VisitDelta{Set: true, ViewTime: at, VisitStart: at, EntryPage: "/p",
			Visits: 1, Bounces: 1, EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}}}
	for _, s := range []store.Store{applied, copied} {
		if err := storetest.InsertFed(t.Context(), s, "", rowsOf); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"page_rollup", "dim_rollup", "page_views", "rejected_rollup", "engagement_rollup", "rollup_feed", "views_raw"} {
		q := "SELECT count() FROM " + table
		want, got := rows(t, applied, q), rows(t, copied, q)
		if !slices.Equal(got, want) || (table != "rejected_rollup" && slices.Equal(want, []string{"0"})) {
			t.Errorf("%s: copied %v, applied %v", q, got, want)
		}
	}
}

func rows(t *testing.T, s store.Store, q string) []string {
	t.Helper()
	res, err := s.Query(t.Context(), q, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for _, r := range res.TextRows() {
		out = append(out, strings.Join(r, "\t"))
	}
	return out
}
