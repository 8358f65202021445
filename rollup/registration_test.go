package rollup_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/sql/queries"
)

// regClock is the registry's clock, moved by the test.
type regClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *regClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *regClock) set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// TestWriterChecksRegistration: a view judged valid, then its site deleted
// before the batch holding it was inserted, was stored as valid after the
// deletion had removed the site's rows, and counted for the domain's next
// registration (found by an attacker's probe; the end-to-end case is
// cmd/viewcount's TestReaddedSiteStartsEmpty). The Writer checks each valid
// verdict against the registry right before the insert: one whose view
// does not belong to the site's current registration is stored as
// unknown_site, kept, not dropped; one that does is stored as judged.
func TestWriterChecksRegistration(t *testing.T) {
	ctx := context.Background()
	p := newPipe(t, 4, 5) // 4 messages of 5 events of sink.example, received at t0
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	clock := &regClock{t: t0.Add(-time.Hour)}
	sites, err := stream.OpenSites(ctx, p.conn, clock.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sites.Close)
	if _, _, err := sites.Add(ctx, "sink.example"); err != nil {
		t.Fatal(err)
	}
	sink := rollup.NewSink(rollup.Config{MaxRows: 1 << 20, Sites: sites}, p.store, p.intents, viewcount.NewMetrics(), discard(), time.Now)
	w, err := sink.Open(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(seq uint64, at time.Time) []viewcount.Verdict {
		vs := make([]viewcount.Verdict, 5)
		for i := range vs {
			vs[i] = viewcount.Verdict{Event: viewcount.Event{Time: at, Site: "sink.example", Page: "/p", UA: "Mozilla/5.0",
				Visitor: seq<<8 | uint64(i), Source: viewcount.SourcePixel}, Reason: viewcount.Valid, Seq: seq, Index: uint32(i)}
		}
		return vs
	}
	step := func(seq uint64, at time.Time, between func()) {
		t.Helper()
		if err := w.Add(ctx, seq, batch(seq, at)); err != nil {
			t.Fatal(err)
		}
		between() // judged valid; the registry changes before the insert
		if err := w.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step(1, t0, func() {}) // registered throughout: valid
	step(2, t0, func() {
		if err := sites.Delete(ctx, "sink.example"); err != nil {
			t.Fatal(err)
		}
	}) // deleted: unknown_site
	step(3, t0, func() {
		clock.set(t0.Add(time.Minute))
		if _, _, err := sites.Add(ctx, "sink.example"); err != nil {
			t.Fatal(err)
		}
	}) // re-added after the views came: unknown_site for the new registration
	step(4, t0.Add(2*time.Minute), func() {}) // the new registration's own views: valid
	if err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}

	res, err := p.store.Query(ctx, queries.Text(queries.Verdicts), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"1": "valid", "2": "unknown_site", "3": "unknown_site", "4": "valid"}
	got := map[string]map[string]int{}
	for _, r := range res.TextRows() { // partition, seq, idx, id, verdict
		if got[r[1]] == nil {
			got[r[1]] = map[string]int{}
		}
		got[r[1]][r[4]]++
	}
	for seq, reason := range want {
		if len(got[seq]) != 1 || got[seq][reason] != 5 {
			t.Errorf("message %s: stored %v, want 5 %s", seq, got[seq], reason)
		}
	}
	if _, views := p.counts(t); views != 10 {
		t.Errorf("the rollups count %d views, want the 10 valid ones", views)
	}
}
