package api

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/internal/httpserve"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// feedDuringDelete is the real store with one interleaving forced: the
// validator's feed of the site's stored rows (feed.CatchUp, the same
// statement a Writer's feed runs) completes just before the deletion's
// views_raw mutation runs, as a feed in flight when the deletion began
// does. Nothing is faked: the statements are the store's.
type feedDuringDelete struct {
	store.Store
	fed atomic.Bool
}

func (s *feedDuringDelete) Exec(ctx context.Context, query string, params store.Params) error {
	if query == queries.Text(queries.SiteDelete) && params["table"] == "views_raw" && !s.fed.Swap(true) {
		if _, err := feed.CatchUp(ctx, s.Store); err != nil {
			return err
		}
	}
	return s.Store.Exec(ctx, query, params)
}

// TestDeleteCatchesFeedInFlight: a view stored just before its site is
// deleted and not yet in the rollups (--feed-every) could be fed while the
// deletion ran, after it had counted the rollups (empty for the site, so
// left alone) and before it deleted views_raw: the rollups kept the view,
// and a re-added site showed it (the attacker's finding, one step later
// in the pipeline than TestReaddedSiteStartsEmpty). The deletion now
// deletes views_raw first, waits for this process's feeds in flight
// (Sites.Quiesce), and only then counts and deletes the rollups.
func TestDeleteCatchesFeedInFlight(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, _, err := f.sites.Add(ctx, "fed.example"); err != nil {
		t.Fatal(err)
	}
	rows := []viewcount.Verdict{{Event: viewcount.Event{Time: f.clock.t, Site: "fed.example", Page: "/late", UA: "Mozilla/5.0",
		Visitor: 1, Source: viewcount.SourcePixel}, Reason: viewcount.Valid, Seq: 1}}
	if err := storetest.NumberBatch(ctx, f.store, rows); err != nil {
		t.Fatal(err)
	}
	if err := f.store.InsertViews(ctx, "late-1", rows); err != nil { // stored, not fed
		t.Fatal(err)
	}
	st := &feedDuringDelete{Store: f.store}
	norm := func(s string) (string, error) { return ingest.NormalisePage(s, false, 0) }
	srv, err := New(Config{PublicLag: f.snap.lag, AdminToken: testAdmin}, f.snap, st, f.sites, norm, discard(), f.clock.now)
	if err != nil {
		t.Fatal(err)
	}
	e, err := httpserve.NewEngine(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Routes(e)
	f.srv = e
	if w := f.do(t, "DELETE", "/v1/admin/sites/fed.example?confirm=fed.example", testAdmin, ""); w.Code != 200 {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	if !st.fed.Load() {
		t.Fatal("the feed never ran: the test proves nothing")
	}
	for table, n := range storetest.SiteRows(t, f.store, "fed.example") {
		if n != 0 {
			t.Errorf("%s: %d rows of the deleted site left by the feed in flight", table, n)
		}
	}
}
