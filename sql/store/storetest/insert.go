package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// Insert stores rows the way a validator's batch is stored and feeds them
// to the rollups (feed.CatchUp), failing t on error: for tests that
// write views_raw directly and then read counts. Rows without a batch
// number get one above every batch stored or fed (in place, so inserting
// the same slice again under the same token is the same batch).
func Insert(t testing.TB, s store.Store, token string, rows []viewcount.Verdict) {
	t.Helper()
	if err := InsertFed(context.Background(), s, token, rows); err != nil {
		t.Fatal(err)
	}
}

// InsertFed is Insert returning its error, for helpers without a t.
func InsertFed(ctx context.Context, s store.Store, token string, rows []viewcount.Verdict) error {
	if err := NumberBatch(ctx, s, rows); err != nil {
		return err
	}
	if err := s.InsertViews(ctx, token, rows); err != nil {
		return err
	}
	if _, err := feed.CatchUp(ctx, s); err != nil {
		return err
	}
	return nil
}

// NumberBatch gives the rows that have none a batch number above every
// batch stored or fed.
func NumberBatch(ctx context.Context, s store.Store, rows []viewcount.Verdict) error {
	got, err := store.Select[queries.FeedNextBatchRow](ctx, s, queries.Text(queries.FeedNextBatch), nil)
	if err != nil {
		return fmt.Errorf("storetest: next batch: %w", err)
	}
	if len(got) != 1 || got[0].PlusGreatestSubquery1Subquery21 == nil {
		return fmt.Errorf("storetest: next batch: got %d rows or NULL", len(got))
	}
	next := *got[0].PlusGreatestSubquery1Subquery21
	for i := range rows {
		if rows[i].Batch == 0 {
			rows[i].Batch = next
		}
	}
	return nil
}
