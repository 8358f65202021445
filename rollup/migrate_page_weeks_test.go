package rollup_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup"
	vcsql "github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestMigratePageWeeks: migration 013's week pieces, merged from the day
// rows of a store that had none, equal the pieces the view writes on a
// store that always had them; a rerun adds nothing; and a piece equals
// the merge of its days.
func TestMigratePageWeeks(t *testing.T) {
	ctx := context.Background()
	// 12 days across a month's end and three ISO weeks: Mon 2026-10-26 to
	// Fri 2026-11-06 (pieces 10-26..10-31, 11-01, 11-02..11-06).
	start := time.Date(2026, 10, 26, 5, 0, 0, 0, time.UTC)
	var rows []viewcount.Verdict
	for i := range 12 * 24 {
		rows = append(rows, viewcount.Verdict{Event: viewcount.Event{Time: start.Add(time.Duration(i) * time.Hour),
			Site: "w.example", Page: "/p" + strconv.Itoa(i%3), ID: "e" + strconv.Itoa(i), Visitor: uint64(i%17 + 1),
			Source: viewcount.SourcePixel}, Reason: viewcount.Valid, Partition: 0, Seq: uint64(i + 1)})
	}
	weeks := "SELECT concat(value, ' ', toString(bucket), ' ', toString(sum(views)), '/', toString(uniqCombined64Merge(12)(uniques))) AS line" +
		" FROM dim_rollup WHERE dim = 'page_week' GROUP BY value, bucket ORDER BY line"
	fromDays := "SELECT concat(value, ' ', toString(toDateTime(greatest(toMonday(bucket), toStartOfMonth(bucket)), 'UTC')) AS piece, ' '," +
		" toString(sum(views)), '/', toString(uniqCombined64Merge(12)(uniques))) AS line" +
		" FROM dim_rollup WHERE dim = 'page' AND grain = 'day' AND page = '' GROUP BY value, piece ORDER BY line"

	// Always had them.
	fresh := storetest.Open(t)
	if err := rollup.Migrate(ctx, fresh, nil); err != nil {
		t.Fatal(err)
	}
	if err := storetest.InsertFed(ctx, fresh, "w1", clone(rows)); err != nil {
		t.Fatal(err)
	}
	want := lines(t, fresh, weeks)
	if n := len(want); n != 9 { // three pages × three pieces
		t.Fatalf("fresh store: %d week pieces, want 9:\n%q", n, want)
	}
	if got := lines(t, fresh, fromDays); !equal(got, want) {
		t.Errorf("pieces differ from the merge of their days:\n%q\nwant\n%q", want, got)
	}

	// Had none: migrated to 012, fed, then upgraded.
	old := storetest.Open(t)
	ms, err := vcsql.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Exec(ctx, vcsql.Query(vcsql.MigrationsInit), nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version > 12 {
			continue
		}
		for i, st := range m.Statements {
			if err := old.Exec(ctx, st, nil); err != nil {
				t.Fatalf("migration %d statement %d: %v", m.Version, i+1, err)
			}
		}
		if err := old.Exec(ctx, vcsql.Query(vcsql.MigrationsRecord), store.Params{"version": strconv.Itoa(m.Version), "name": m.Name}); err != nil {
			t.Fatal(err)
		}
	}
	if err := storetest.InsertFed(ctx, old, "w1", clone(rows)); err != nil {
		t.Fatal(err)
	}
	if got := lines(t, old, weeks); len(got) != 0 {
		t.Fatalf("page_week rows before migration 013: %q", got)
	}
	if err := rollup.Migrate(ctx, old, nil); err != nil {
		t.Fatal(err)
	}
	if got := lines(t, old, weeks); !equal(got, want) {
		t.Errorf("after the upgrade:\n%q\nwant\n%q", got, want)
	}
	for _, m := range ms {
		if m.Version == 13 {
			for _, st := range m.Statements {
				if err := old.Exec(ctx, st, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if got := lines(t, old, weeks); !equal(got, want) {
		t.Errorf("after rerunning migration 13:\n%q\nwant\n%q", got, want)
	}
}

func clone(vs []viewcount.Verdict) []viewcount.Verdict {
	return append([]viewcount.Verdict(nil), vs...)
}

func lines(t *testing.T, s store.Store, q string) []string {
	t.Helper()
	res, err := s.Query(context.Background(), q, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		out[i] = r[0]
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
