package queries_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

var placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*):([^{}]+)\}`)

// placeholders gives every {name:Type} of query a value of its type.
func placeholders(query string) store.Params {
	p := store.Params{}
	for _, m := range placeholderRE.FindAllStringSubmatch(query, -1) {
		typ := m[2]
		switch {
		case typ == "Identifier" && m[1] == "column":
			p[m[1]] = "browser"
		case typ == "Identifier":
			p[m[1]] = "views_raw"
		case m[1] == "tz":
			p[m[1]] = "UTC"
		case m[1] == "grain":
			p[m[1]] = "hour"
		case strings.HasPrefix(typ, "DateTime"):
			p[m[1]] = "2024-01-01 00:00:00"
		case strings.HasPrefix(typ, "Array("):
			p[m[1]] = "[]"
		case strings.HasPrefix(typ, "Map("):
			p[m[1]] = "{}"
		case typ == "Bool":
			p[m[1]] = "false"
		case typ == "String":
			p[m[1]] = "x"
		default: // the integers
			p[m[1]] = "1"
		}
	}
	return p
}

// needs are the statements an empty single-node store cannot run, and why;
// the test still requires their row type.
var needs = map[string]string{
	queries.ClusterDatabase:          "a cluster",
	queries.ClusterMigrationsApplied: "a cluster",
	queries.ClusterMigrationsInit:    "a cluster",
	queries.ClusterMigrationsRecord:  "a cluster",
	queries.RawRetentionSetCluster:   "a cluster",
	queries.DropDetachedPart:         "a detached part",
	queries.RevalidateMonthChanges:   "a revalidation's revalidate_changes table",
}

// TestNamedQueryRows runs every named query on a migrated empty store with
// a value of each placeholder's type, and checks the result's columns and
// types are what its row type reads (store.CheckRow); a statement marked
// NoRows must return no columns. A query without a row type fails.
func TestNamedQueryRows(t *testing.T) {
	s := storetest.Open(t)
	if err := migrations.Apply(t.Context(), s, nil); err != nil {
		t.Fatal(err)
	}
	for _, name := range queries.Names() {
		row := queries.RowType(name)
		if row == nil {
			t.Errorf("%s has no row type in sql/queries/rows.go", name)
			continue
		}
		if why, ok := needs[name]; ok {
			t.Logf("%s: not run, needs %s", name, why)
			continue
		}
		q := queries.Text(name)
		res, err := s.Query(t.Context(), q, placeholders(q))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if _, none := row.(queries.NoRows); none {
			if len(res.Columns) != 0 {
				t.Errorf("%s is NoRows but returns %q", name, res.Columns)
			}
			continue
		}
		if err := store.CheckRow(row, res.Columns, res.Types); err != nil {
			t.Errorf("%s: %v (columns %q, types %q)", name, err, res.Columns, res.Types)
		}
	}
}
