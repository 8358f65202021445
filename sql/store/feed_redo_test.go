package store_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestFeedRedoneAfterMerge: a feed cut short after some views took it (two
// views missing, as if the process died between them), redone after
// views_raw merged the feed's 20 parts into one, so the redo's read meets
// the rows in another order. The views that had the feed drop the redo,
// the others take it once: the derived tables read as a store's that fed
// once, and a third run changes nothing.
//
// This is what the feed's sort by stream order is for (sql/queries/feed.sql).
// Without it the test fails: page_rollup, rejected_rollup and
// engagement_rollup take the redo a second time, although each view gets
// the feed as one block under the same token, because a view's block is
// recognised by its content too, and aggregate states built in another
// order are other bytes (docs/benchmarks/history/issue-25.md, "The feed
// without its sort").
func TestFeedRedoneAfterMerge(t *testing.T) {
	ctx := t.Context()
	ref := migrated(t, openTestStore)
	insertFeedBatches(t, ref)
	if err := feed.Run(ctx, ref, 1, 1, feedBatches, time.Time{}); err != nil {
		t.Fatal(err)
	}
	want := storetest.DerivedRows(t, ref)

	s := migrated(t, openTestStore)
	mustExec(t, s, "SYSTEM STOP MERGES views_raw", nil)
	insertFeedBatches(t, s)
	if n := activeParts(t, s); n != feedBatches {
		t.Fatalf("views_raw has %d parts, want one a batch (%d)", n, feedBatches)
	}
	missing := []string{"dim_rollup_mv", "page_views_mv"}
	var creates []string
	for _, v := range missing {
		res := mustQuery(t, s, "SHOW CREATE TABLE {v:Identifier}", store.Params{"v": v})
		if !res.Next() {
			t.Fatalf("no CREATE for %s", v)
		}
		creates = append(creates, res.String("statement"))
		mustExec(t, s, "DROP VIEW {v:Identifier}", store.Params{"v": v})
	}
	if err := feed.Run(ctx, s, 1, 1, feedBatches, time.Time{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range creates {
		mustExec(t, s, c, nil)
	}
	mustExec(t, s, "SYSTEM START MERGES views_raw", nil)
	mustExec(t, s, "OPTIMIZE TABLE views_raw FINAL", nil)
	if n := activeParts(t, s); n != 1 {
		t.Fatalf("views_raw has %d parts after OPTIMIZE FINAL, want 1", n)
	}
	r := feed.Range{Partition: 1, First: 1, Last: feedBatches}
	for i := range 2 {
		if err := feed.Copy(ctx, s, r); err != nil {
			t.Fatal(err)
		}
		if d := storetest.DiffRows(storetest.DerivedRows(t, s), want); d != "" {
			t.Fatalf("after redo %d the derived tables differ from a store that fed once:\n%s", i+1, d)
		}
	}
}

// feedBatches is how many batches insertFeedBatches stores.
const feedBatches = 20

// insertFeedBatches stores 60k load rows over 30k pages, a third of them
// engagement reports, in partition 1 as feedBatches batches of 3,000 (one
// part each).
func insertFeedBatches(t *testing.T, s store.Store) {
	t.Helper()
	rows := storetest.LoadRows(60_000, 30_000, time.Date(2026, 11, 12, 10, 0, 0, 0, time.UTC))
	storetest.WithVisits(rows)
	per := len(rows) / feedBatches
	for b := 1; b <= feedBatches; b++ {
		batch := rows[(b-1)*per : b*per]
		for i := range batch {
			batch[i].Batch = uint64(b)
		}
		if err := s.InsertViews(t.Context(), "feed-blocks-"+strconv.Itoa(b), batch); err != nil {
			t.Fatal(err)
		}
	}
}

// activeParts is how many active parts views_raw has. Test-only SQL.
func activeParts(t *testing.T, s store.Store) int {
	t.Helper()
	res := mustQuery(t, s, "SELECT count() AS n FROM system.parts WHERE database = currentDatabase() AND table = 'views_raw' AND active", nil)
	if !res.Next() {
		t.Fatal("no count of views_raw's parts")
	}
	return int(res.Uint64("n"))
}
