package migrations_test

import (
	"io"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// recountDiffering returns each rollup's number of differing rows.
func recountDiffering(t *testing.T, s store.Store, now time.Time) map[string]uint64 {
	t.Helper()
	res, err := repair.Recount(t.Context(), s, now, 3)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, r := range res {
		out[r.Table] = r.Differing
		if uint64(len(r.Examples)) > r.Differing || len(r.Examples) > 3 {
			t.Errorf("%s: %d examples of %d differing rows, limit 3", r.Table, len(r.Examples), r.Differing)
		}
	}
	return out
}

// applyBefore applies and records every migration older than version, as
// a binary of that age left the store, and returns them all (the ones
// from version on for the test to run itself).
func applyBefore(t *testing.T, s store.Store, version int) []migrations.Migration {
	t.Helper()
	ctx := t.Context()
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, queries.Text(queries.MigrationsInit), nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version >= version {
			continue
		}
		for _, st := range m.Statements {
			if err := s.Exec(ctx, st, nil); err != nil {
				t.Fatalf("migration %d: %v", m.Version, err)
			}
		}
		if err := s.Exec(ctx, queries.Text(queries.MigrationsRecord), store.Params{"version": strconv.Itoa(m.Version), "name": m.Name}); err != nil {
			t.Fatal(err)
		}
	}
	return ms
}
