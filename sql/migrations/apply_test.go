package migrations_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"regexp"
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

func migrationCount(t *testing.T) int {
	t.Helper()
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	return len(ms)
}

func queryCell(t *testing.T, s store.Store, q string) string {
	t.Helper()
	res, err := s.Query(t.Context(), q, nil)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if len(res.TextRows()) != 1 || len(res.TextRows()[0]) != 1 {
		t.Fatalf("%s: %q", q, res.TextRows())
	}
	return res.TextRows()[0][0]
}

func TestMigrateAppliesOnceAndLogs(t *testing.T) {
	s := storetest.Open(t)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	if err := migrations.Apply(t.Context(), s, logger); err != nil {
		t.Fatal(err)
	}
	n := migrationCount(t)
	if got := strings.Count(logs.String(), "migration applied"); got != n {
		t.Errorf("first run logged %d applied migrations, want %d:\n%s", got, n, logs.String())
	}
	if !strings.Contains(logs.String(), "component=migrate") || !strings.Contains(logs.String(), "name=views_raw") {
		t.Errorf("log lacks component or name:\n%s", logs.String())
	}

	logs.Reset()
	if err := migrations.Apply(t.Context(), s, logger); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if logs.Len() != 0 {
		t.Errorf("second run applied something:\n%s", logs.String())
	}
	if got := queryCell(t, s, "SELECT count() FROM schema_migrations"); got != strconv.Itoa(n) {
		t.Errorf("schema_migrations has %s rows, want %d", got, n)
	}
	// The schema works: a named query runs against it.
	if _, err := s.Query(t.Context(), queries.Text(queries.PageCount), store.Params{"site": "a", "page": "/"}); err != nil {
		t.Errorf("page_count after migrate: %v", err)
	}
}

// A run that stopped after some migrations is completed by the next one.
func TestMigrateResumes(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	if err := s.Exec(ctx, queries.Text(queries.MigrationsInit), nil); err != nil {
		t.Fatal(err)
	}
	ms, _ := migrations.All()
	for _, st := range ms[0].Statements {
		if err := s.Exec(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Exec(ctx, queries.Text(queries.MigrationsRecord), store.Params{"version": "1", "name": ms[0].Name}); err != nil {
		t.Fatal(err)
	}
	// Half of migration 2 ran before the crash.
	if err := s.Exec(ctx, ms[1].Statements[0], nil); err != nil {
		t.Fatal(err)
	}
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatalf("resume: %v", err)
	}
	if got := queryCell(t, s, "SELECT groupArray(version) FROM (SELECT version FROM schema_migrations ORDER BY version)"); got != "[1,2]" && !strings.HasPrefix(got, "[1,2,") {
		t.Errorf("versions = %s", got)
	}
	if got := queryCell(t, s, "SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'page_rollup_mv'"); got != "1" {
		t.Errorf("page_rollup_mv missing after resume")
	}
}

// failingExecer is the real store with one statement made to fail.
type failingExecer struct {
	store.Store
	failOn string
}

var errInjected = errors.New("injected failure")

func (f failingExecer) Exec(ctx context.Context, q string, p store.Params) error {
	if strings.Contains(q, f.failOn) {
		return errInjected
	}
	return f.Store.Exec(ctx, q, p)
}

func TestMigrateStopsAtFailure(t *testing.T) {
	s := storetest.Open(t)
	err := migrations.Apply(t.Context(), failingExecer{s, "page_hour_mv"}, nil)
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "002_rollups") {
		t.Fatalf("err = %v, want the injected failure naming 002_rollups", err)
	}
	// Migration 2 is not recorded, so the next run applies it.
	if got := queryCell(t, s, "SELECT count() FROM schema_migrations WHERE version = 2"); got != "0" {
		t.Errorf("failed migration recorded")
	}
	if err := migrations.Apply(t.Context(), s, nil); err != nil {
		t.Fatalf("rerun: %v", err)
	}
}

// Migration 4 replaces the four rollup tables by one: counts rolled up
// before the upgrade survive it, views inserted after it land in every
// grain, and running it again (a crash before it was recorded) copies
// nothing twice.
func TestMigrateOneRollupKeepsCounts(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	ms, _ := migrations.All()
	apply := func(versions ...int) {
		t.Helper()
		for _, v := range versions {
			for _, st := range ms[v-1].Statements {
				if err := s.Exec(ctx, st, nil); err != nil {
					t.Fatalf("migration %d: %v", v, err)
				}
			}
		}
	}
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
		return b.String()
	}
	old := time.Date(2026, 10, 31, 23, 59, 0, 0, time.UTC) // spans two minutes, hours, days and months
	// 007's columns too: the insert path writes them. Adding them early is
	// what a rerun of 007 would find anyway (ADD COLUMN IF NOT EXISTS).
	apply(1, 2, 3, 7)
	addInsertColumns(t, s)
	insert("before", 100, old)
	before := counts()
	if before != "page_minute=100/7 page_hour=100/7 page_day=100/7 page_total=100/7 " {
		t.Fatalf("before the upgrade: %s", before)
	}
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	migrated = true
	if got := counts(); got != before {
		t.Errorf("after the upgrade %s, want %s", got, before)
	}
	if got := queryCell(t, s, "SELECT arrayStringConcat(arraySort(groupArray(name)), ' ') FROM system.tables WHERE database = currentDatabase() AND name LIKE 'page_%_mv'"); got != "page_rollup_mv page_views_mv" {
		t.Errorf("materialized views %q, want page_rollup_mv (and migration 011's page_views_mv) only", got)
	}
	apply(4) // a rerun, as after a crash before schema_migrations recorded it
	if got := counts(); got != before {
		t.Errorf("after rerunning migration 4 %s, want %s", got, before)
	}
	insert("after", 10, old.Add(time.Hour))
	if got, want := counts(), "page_minute=110/7 page_hour=110/7 page_day=110/7 page_total=110/7 "; got != want {
		t.Errorf("after new views %s, want %s", got, want)
	}
	// The grains keep their buckets: 100 views over 100 s from 23:59:00
	// fall in two minutes, two hours and two days, the 10 an hour later in
	// a third minute of the second hour and day.
	for table, want := range map[string]string{"page_minute": "3", "page_hour": "2", "page_day": "2"} {
		if got := queryCell(t, s, "SELECT uniqExact(bucket) FROM "+table); got != want {
			t.Errorf("%s has %s buckets, want %s", table, got, want)
		}
	}
}

// addInsertColumns adds the views_raw columns of later migrations to a
// schema a test holds at an earlier version: the insert path writes them.
// 012's batch column (its first statement) and every later statement that
// alters views_raw; a rerun finds them there (ADD COLUMN IF NOT EXISTS).
func addInsertColumns(t *testing.T, s store.Store) {
	t.Helper()
	ms, _ := migrations.All()
	stmts := []string{ms[11].Statements[0]}
	altersRaw := regexp.MustCompile(`(?m)^ALTER TABLE views_raw\b`)
	for _, m := range ms[12:] {
		for _, st := range m.Statements {
			if altersRaw.MatchString(st) {
				stmts = append(stmts, st)
			}
		}
	}
	for _, st := range stmts {
		if err := s.Exec(t.Context(), st, nil); err != nil {
			t.Fatalf("later views_raw columns: %v", err)
		}
	}
}

// insertAt inserts vs through the insert path of the schema the test has
// reached: before migration 012 the views run on the insert itself (the
// rows' batch is 0), from it on the rows are numbered and fed.
func insertAt(ctx context.Context, s store.Store, token string, vs []viewcount.Verdict, fed bool) error {
	if fed {
		return storetest.InsertFed(ctx, s, token, vs)
	}
	return s.InsertViews(ctx, token, vs)
}
