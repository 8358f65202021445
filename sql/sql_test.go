package sql

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestMigrations(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 2 {
		t.Fatalf("got %d migrations, want at least 2", len(ms))
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %d (%s) has version %d: versions must run 1, 2, 3… without gaps", i, m.Name, m.Version)
		}
		for _, st := range m.Statements {
			if strings.HasSuffix(st, ";") {
				t.Errorf("%s: statement keeps its ';': %q", m.Name, st)
			}
			// Re-running a migration must be harmless: creations are IF NOT
			// EXISTS, removals IF EXISTS, a data copy carries a
			// deduplication token so a rerun inserts nothing, and setting a
			// TTL or a table setting sets the same value again, CREATE OR
			// REPLACE builds the table afresh from its source again, and a
			// delete finds nothing left to delete.
			if !strings.Contains(st, "DELETE WHERE") && !strings.Contains(st, "CREATE OR REPLACE TABLE") && !strings.Contains(st, "IF NOT EXISTS") && !strings.Contains(st, "IF EXISTS") && !strings.Contains(st, "insert_deduplication_token") && !strings.Contains(st, "MODIFY TTL") && !strings.Contains(st, "MODIFY SETTING") {
				t.Errorf("%s: statement is not rerunnable (IF NOT EXISTS, IF EXISTS or a deduplication token): %.60q", m.Name, st)
			}
			// The connection chooses the database.
			if regexp.MustCompile(`(?i)\b(viewcount|default)\.`).MatchString(st) {
				t.Errorf("%s: statement names a database: %.60q", m.Name, st)
			}
		}
	}
	if ms[0].Name != "views_raw" || len(ms[0].Statements) != 1 {
		t.Errorf("first migration = %s with %d statements", ms[0].Name, len(ms[0].Statements))
	}
}

// Every MergeTree target must keep a deduplication window, or a retried
// batch would be counted twice in that table.
func TestMigrationsDedupWindow(t *testing.T) {
	ms, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		for _, st := range m.Statements {
			if strings.Contains(st, "CREATE TABLE") && strings.Contains(st, "MergeTree") && !strings.Contains(st, "non_replicated_deduplication_window") {
				t.Errorf("%s: table without non_replicated_deduplication_window: %.60q", m.Name, st)
			}
		}
	}
}

func TestSplit(t *testing.T) {
	f := func(script string, want ...string) {
		t.Helper()
		got := Split(script)
		if len(want) == 0 {
			want = nil
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Split(%q) = %q, want %q", script, got, want)
		}
	}
	f("")
	f("-- only a comment\n\n")
	f("SELECT 1;", "SELECT 1")
	f("SELECT 1;\nSELECT 2;\n", "SELECT 1", "SELECT 2")
	f("SELECT 1;  \r\n", "SELECT 1")
	f("SELECT ';' AS x, 2\nFROM t;\n", "SELECT ';' AS x, 2\nFROM t")
	f("-- head\nCREATE TABLE t\n(a UInt8)\nENGINE = Memory;\n-- tail\n", "-- head\nCREATE TABLE t\n(a UInt8)\nENGINE = Memory")
	f("SELECT 1;\nSELECT 2", "SELECT 1", "SELECT 2")
}

func TestQueries(t *testing.T) {
	for _, name := range []string{PageCount, PageCounts, SiteCount, TopPages, InvalidByDay, InvalidASNs, InvalidTopAgents, InvalidTopClasses, Verdicts, Reasons, MigrationsInit, MigrationsApplied, MigrationsRecord,
		RawRetention, RawRetentionSet, DetachedParts, DropDetachedPart, RawMonths, RawLost} {
		q := Query(name)
		if q == "" || strings.HasSuffix(q, ";") {
			t.Errorf("query %s = %q", name, q)
		}
	}
	if got := len(Queries()); got < 6 {
		t.Errorf("Queries() has %d names", got)
	}
	for _, name := range Queries() { // every file, not only the named ones
		if q := Query(name); q == "" || strings.HasSuffix(q, ";") {
			t.Errorf("query %s = %q", name, q)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Query of an unknown name did not panic")
		}
	}()
	Query("no_such_query")
}

func TestExamples(t *testing.T) {
	names := Examples()
	if len(names) < 2 {
		t.Fatalf("Examples() = %q", names)
	}
	for _, name := range names {
		text, ok := Example(name)
		if !ok || !strings.HasPrefix(text, "--") {
			t.Errorf("example %s has no comment header", name)
		}
	}
	if _, ok := Example("nope"); ok {
		t.Error("Example(nope) found")
	}
}

func TestRepair(t *testing.T) {
	for _, name := range []string{"page_rollup", "dim_rollup", "page_views", "rejected_rollup"} {
		for _, step := range []string{"prepare", "fill", "swap", "recount"} {
			if st := Repair(name + "_" + step); len(st) == 0 {
				t.Errorf("repair script %s_%s has no statements", name, step)
			}
		}
	}
	// page_views and rejected_rollup are swapped a partition at a time,
	// dim_rollup and rejected_rollup recounted a month at a time.
	for _, name := range []string{"page_views_partitions", "page_views_drop", "dim_rollup_months",
		"rejected_rollup_partitions", "rejected_rollup_drop", "rejected_rollup_months"} {
		if st := Repair(name); len(st) != 1 {
			t.Errorf("repair script %s has %d statements, want 1", name, len(st))
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Repair of an unknown name did not panic")
		}
	}()
	Repair("no_such_script")
}
