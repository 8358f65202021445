package rollup_test

import (
	"context"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup"
	vcsql "github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestExamplesRun runs every analyst example from sql/examples against the
// migrated schema with a little data, so an example that drifts from the
// schema fails here rather than in an analyst's hands.
func TestExamplesRun(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t)
	if err := rollup.Migrate(ctx, s, discard()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	var rows []viewcount.Verdict
	for i, r := range []viewcount.Reason{viewcount.Valid, viewcount.BotUA, viewcount.Rate, viewcount.Valid} {
		rows = append(rows, viewcount.Verdict{Event: viewcount.Event{Time: now.Add(-time.Duration(i) * time.Hour),
			Site: "ex.example", Page: "/p", UA: "ua", Visitor: uint64(i), Network: 7}, Reason: r, Seq: uint64(i)})
	}
	if err := storetest.InsertFed(ctx, s, "", rows); err != nil {
		t.Fatal(err)
	}
	for _, name := range vcsql.Examples() {
		q, _ := vcsql.Example(name)
		res, err := s.Query(ctx, q, store.Params{"site": "ex.example", "page": "/p"})
		if err != nil {
			t.Errorf("example %s: %v", name, err)
			continue
		}
		if len(res.Rows) == 0 && name != "invalid_share_by_page" { // that one needs 20+ events a page
			t.Errorf("example %s returned no rows", name)
		}
	}
}
