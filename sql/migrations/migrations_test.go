package migrations

import (
	"regexp"
	"strings"
	"testing"
)

func TestMigrations(t *testing.T) {
	ms, err := All()
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
	ms, err := All()
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
