package queries

import (
	"reflect"
	"strings"
	"testing"
)

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
		q := Text(name)
		if q == "" || strings.HasSuffix(q, ";") {
			t.Errorf("query %s = %q", name, q)
		}
	}
	if got := len(Names()); got < 6 {
		t.Errorf("Names() has %d names", got)
	}
	for _, name := range Names() { // every file, not only the named ones
		if q := Text(name); q == "" || strings.HasSuffix(q, ";") {
			t.Errorf("query %s = %q", name, q)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Query of an unknown name did not panic")
		}
	}()
	Text("no_such_query")
}

func TestRepair(t *testing.T) {
	for _, name := range []string{"page_rollup", "dim_rollup", "page_views", "rejected_rollup", "engagement_rollup"} {
		for _, step := range []string{"prepare", "fill", "swap", "recount"} {
			if st := Repair(name + "_" + step); len(st) == 0 {
				t.Errorf("repair script %s_%s has no statements", name, step)
			}
		}
	}
	// page_views and rejected_rollup are swapped a partition at a time,
	// dim_rollup, rejected_rollup and engagement_rollup recounted a month
	// at a time.
	for _, name := range []string{"page_views_partitions", "page_views_drop", "dim_rollup_months",
		"rejected_rollup_partitions", "rejected_rollup_drop", "rejected_rollup_months", "engagement_rollup_months"} {
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
