package migrations_test

import (
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/viewcount/viewcount/rollup/repair"
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
