package migrations_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Migration 9 rebuilds page_rollup with 64 KiB granules: counts rolled up
// before the upgrade survive it in every grain, running it again (a crash
// before schema_migrations recorded it) counts nothing twice, and views
// inserted after it land in the new table through the unchanged
// materialized view.
func TestMigrateRollupGranulesKeepsCounts(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	apply := func(m migrations.Migration) {
		t.Helper()
		for _, st := range m.Statements {
			if err := s.Exec(ctx, st, nil); err != nil {
				t.Fatalf("migration %d: %v", m.Version, err)
			}
		}
	}
	var nine migrations.Migration
	for _, m := range ms {
		switch {
		case m.Version < 9:
			apply(m)
		case m.Version == 9:
			nine = m
		}
	}
	if nine.Version != 9 {
		t.Fatal("no migration 9")
	}
	addInsertColumns(t, s)
	migrated := false // through 012: rows are fed
	insert := func(token string, n int, at time.Time) {
		t.Helper()
		vs := make([]viewcount.Verdict, n)
		for i := range vs {
			vs[i] = viewcount.Verdict{Event: viewcount.Event{Time: at.Add(time.Duration(i) * time.Second), Site: "a.example",
				Page: "/p" + strconv.Itoa(i%3), ID: token + strconv.Itoa(i), Visitor: uint64(i%7 + 1), Source: viewcount.SourcePixel},
				Reason: viewcount.Valid, Seq: uint64(i + 1)}
		}
		if err := insertAt(ctx, s, token, vs, migrated); err != nil {
			t.Fatal(err)
		}
	}
	counts := func() string {
		t.Helper()
		var b strings.Builder
		for _, table := range []string{"page_minute", "page_hour", "page_day", "page_total"} {
			b.WriteString(table + "=" + queryCell(t, s, "SELECT concat(toString(sum(views)), '/', toString(uniqCombined64Merge(uniques))) FROM "+table) + " ")
		}
		// Keys (page, bucket) per grain: a row lost or split shows here.
		b.WriteString("keys=" + queryCell(t, s, "SELECT toString(groupArray(n)) FROM (SELECT uniqExact(page, bucket) AS n FROM page_rollup GROUP BY grain ORDER BY grain)"))
		return b.String()
	}
	granules := func() string {
		return queryCell(t, s, "SELECT extract(engine_full, 'index_granularity_bytes = \\d+') FROM system.tables WHERE database = currentDatabase() AND name = 'page_rollup'")
	}
	old := time.Date(2026, 10, 31, 23, 59, 0, 0, time.UTC) // spans two minutes, hours and days
	// Two inserts, so the copy reads two unmerged parts.
	insert("before1", 100, old)
	insert("before2", 50, old.Add(2*time.Minute))
	// 150 views by 7 visitors on 3 pages, in the minutes 23:59, 00:00 and
	// 00:01, two hours and two days.
	before := counts()
	const wantBefore = "page_minute=150/7 page_hour=150/7 page_day=150/7 page_total=150/7 keys=[9,6,6,3]"
	if before != wantBefore {
		t.Fatalf("before the upgrade: %s, want %s", before, wantBefore)
	}
	if g := granules(); g != "" {
		t.Fatalf("page_rollup before migration 9 has %q", g)
	}
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	migrated = true
	if got := counts(); got != before {
		t.Errorf("after the upgrade %s, want %s", got, before)
	}
	if g := granules(); g != "index_granularity_bytes = 65536" {
		t.Errorf("page_rollup after migration 9 has %q, want 64 KiB granules", g)
	}
	apply(nine) // a rerun, as after a crash before schema_migrations recorded it
	if got := counts(); got != before {
		t.Errorf("after rerunning migration 9 %s, want %s", got, before)
	}
	if got := queryCell(t, s, "SELECT groupArray(name) FROM (SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE '%page_rollup%' ORDER BY name)"); got != "['page_rollup','page_rollup_mv']" {
		t.Errorf("tables after the rebuild: %s", got)
	}
	insert("after", 10, old.Add(time.Hour))
	if got, want := counts(), "page_minute=160/7 page_hour=160/7 page_day=160/7 page_total=160/7 keys=[12,6,6,3]"; got != want {
		t.Errorf("after new views %s, want %s", got, want)
	}
	// The api's point read: /p0 has every third view of each insert.
	res, err := s.Query(ctx, queries.Text(queries.PageCount), store.Params{"site": "a.example", "page": "/p0"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.TextRows()[0], "/"); got != "55/7" {
		t.Errorf("page_count /p0 = %s, want 55/7", got)
	}
}
