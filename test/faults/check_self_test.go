//go:build faults

package faults

import (
	_ "embed"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
)

//go:embed testdata/tamper_rollup.sql
var tamperRollupSQL string

// The suite is only as good as its check: inspect must see a missing id,
// an id counted twice, an id nobody sent and a rollup off its recount.
func TestInspectSeesEveryDifference(t *testing.T) {
	data := t.TempDir()
	ctx := t.Context()
	// The chDB engine serves one path per process: this store closes before
	// TestFaults opens the children's stores on theirs.
	s, err := store.Open(ctx, store.Config{DataDir: data}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	const site = "inspect.example"
	row := func(id string, seq uint64) viewcount.Verdict {
		return viewcount.Verdict{Event: viewcount.Event{Time: time.Now(), Site: site, Page: "/p/" + id, ID: id, Visitor: seq},
			Reason: viewcount.Valid, Seq: seq}
	}
	// Engagement reports of a: one accepted, one orphaned; they are no
	// views, so a's view is counted once.
	rep := func(engaged uint32, seq uint64, reason viewcount.Reason) viewcount.Verdict {
		v := row("a", seq)
		v.Kind, v.Engagement.EngagedMS, v.Reason = viewcount.KindEngagement, engaged, reason
		return v
	}
	if err := storetest.InsertFed(ctx, s, "inspect-1", []viewcount.Verdict{row("a", 1), row("b", 2), row("b", 3), row("stray", 4),
		rep(500, 5, viewcount.Valid), rep(700, 6, viewcount.EngagementOrphan)}); err != nil {
		t.Fatal(err)
	}
	l := &load{acked: map[string]int{"a": 1, "b": 2, "lost": 1}, gaveUp: map[string]bool{},
		reports: map[report]bool{{"a", 500}: true, {"a", 700}: true, {"a", 900}: true}}

	o, err := inspect(ctx, data, site, l)
	if err != nil {
		t.Fatal(err)
	}
	if o.acknowledged != 3 || o.counted != 4 || o.missing != 1 || o.duplicates != 1 || o.unexpected != 1 || len(o.rollupDiffs) != 0 ||
		o.reports != 3 || o.reportsMissing != 1 || len(o.reportsRefused) != 1 {
		t.Errorf("inspect = %+v; want acknowledged 3, counted 4, missing 1 (lost), duplicates 1 (b), unexpected 1 (stray), rollups exact, "+
			"3 reports, 1 missing (900 ms), 1 refused (the orphan)", o)
	}

	if err := s.Exec(ctx, tamperRollupSQL, store.Params{"site": site, "page": "/p/a"}); err != nil {
		t.Fatal(err)
	}
	if o, err = inspect(ctx, data, site, l); err != nil {
		t.Fatal(err)
	}
	if len(o.rollupDiffs) != 1 {
		t.Errorf("after one extra rollup view: %d rollup differences %v, want 1", len(o.rollupDiffs), o.rollupDiffs)
	}
	if o.ok() {
		t.Error("ok() with differences")
	}
}
