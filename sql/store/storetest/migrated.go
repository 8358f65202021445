package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
)

// The schema at its newest, migrated once per test binary into a database
// of the shared engine and copied from there: replaying every migration
// costs a second per test (about a hundred DDL statements and inserts),
// creating the tables and views they leave costs a fifth of that.
var template struct {
	once   sync.Once
	tables []string // CREATE statements of tables, on templateDB
	views  []string // CREATE statements of views and materialized views
	copied []string // tables with rows (schema_migrations), copied before any view exists
	err    error
}

const templateDB = "storetest_migrated_template"

// Migrated is Open with the database at the newest schema, as
// migrations.Apply leaves a new one: the same tables and views (the
// engine's own CREATE statements for what Apply made) and the same
// schema_migrations rows, so Apply on it is a no-op.
// TestMigratedIsApplied holds it to that.
func Migrated(t testing.TB) store.Store {
	t.Helper()
	s, db := open(t)
	template.once.Do(migrateTemplate)
	if template.err != nil {
		t.Fatalf("storetest: migrated template: %v", template.err)
	}
	ctx := context.Background()
	onDB := func(q string) string { return strings.ReplaceAll(q, templateDB+".", "`"+db+"`.") }
	for _, q := range template.tables {
		if err := shared.keeper.Exec(ctx, onDB(q), nil); err != nil {
			t.Fatalf("storetest: copy the migrated schema: %v", err)
		}
	}
	for _, name := range template.copied {
		// Test-only SQL: both names are ours.
		q := "INSERT INTO `" + db + "`.`" + name + "` SELECT * FROM " + templateDB + ".`" + name + "`"
		if err := shared.keeper.Exec(ctx, q, nil); err != nil {
			t.Fatalf("storetest: copy %s: %v", name, err)
		}
	}
	if err := createAll(ctx, shared.keeper, template.views, onDB); err != nil {
		t.Fatalf("storetest: copy the migrated views: %v", err)
	}
	return s
}

func migrateTemplate() {
	ctx := context.Background()
	s, err := store.Open(ctx, store.Config{DataDir: shared.dir, Database: templateDB}, nil)
	if err != nil {
		template.err = err
		return
	}
	shared.template = s
	if err := migrations.Apply(ctx, s, nil); err != nil {
		template.err = err
		return
	}
	// Test-only SQL: the catalogue of our own database.
	objs, err := store.Select[struct {
		Name   string `ch:"name"`
		Engine string `ch:"engine"`
		Create string `ch:"create_table_query"`
		Rows   uint64 `ch:"rows"`
	}](ctx, s, "SELECT name, engine, create_table_query, ifNull(total_rows, 0) AS rows FROM system.tables WHERE database = currentDatabase() ORDER BY name", nil)
	if err != nil {
		template.err = err
		return
	}
	for _, o := range objs {
		if !strings.HasPrefix(o.Create, "CREATE ") {
			template.err = fmt.Errorf("%s: no CREATE statement: %q", o.Name, o.Create)
			return
		}
		switch o.Engine {
		case "View", "MaterializedView":
			template.views = append(template.views, o.Create)
		default:
			template.tables = append(template.tables, o.Create)
			if o.Rows > 0 {
				template.copied = append(template.copied, o.Name)
			}
		}
	}
}

// createAll runs the CREATE statements qs, in rounds until each succeeded
// once, since a view may read another one made after it in name order.
func createAll(ctx context.Context, s store.Store, qs []string, onDB func(string) string) error {
	for len(qs) > 0 {
		var failed []string
		var last error
		for _, q := range qs {
			if err := s.Exec(ctx, onDB(q), nil); err != nil {
				failed, last = append(failed, q), err
			}
		}
		if len(failed) == len(qs) {
			return last
		}
		qs = failed
	}
	return nil
}
