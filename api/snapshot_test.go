package api

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestSnapshotRefreshesPagesReadAgain: a refresh re-reads only the counts
// read again since their last reading: refreshing every tracked page would
// keep a scan of random pages, each read once, re-read every lag until they
// went idle, costing CPU with no reader. A page read once costs its own
// fetch and nothing after; its next read fetches it anew once its reading
// is stale.
func TestSnapshotRefreshesPagesReadAgain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	lag := f.snap.lag
	get := func(page string) Count {
		t.Helper()
		c, err := f.snap.Get(ctx, "example.com", page)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	queries := func(what string, want int64, do func()) {
		t.Helper()
		before := f.reads.n.Load()
		do()
		if n := f.reads.n.Load() - before; n != want {
			t.Errorf("%s: %d store queries, want %d", what, n, want)
		}
	}
	refresh := func() { f.snap.refresh(ctx) }
	start := f.clock.t

	// 1,200 pages (three refresh chunks) read once each: one query apiece,
	// then no refresh queries them again.
	const n = 1200
	queries("first reads", n, func() {
		for i := range n {
			get("/p" + strconv.Itoa(i))
		}
	})
	for i := 1; i <= 3; i++ {
		f.clock.t = start.Add(time.Duration(i) * lag)
		queries("refresh "+strconv.Itoa(i)+" after reads once", 0, refresh)
	}
	if len(f.snap.entries) != n {
		t.Fatalf("%d entries tracked, want %d until they are idle", len(f.snap.entries), n)
	}

	// A page read again is refreshed once per lag while it is read, and
	// then left alone.
	f.clock.t = start
	f.snap = NewSnapshot(f.reads, lag, 0, f.clock.now, discard())
	queries("first read of /hot", 1, func() { get("/hot") })
	queries("second read of /hot", 0, func() { get("/hot") })
	f.views(t, "example.com", "/hot", 5)
	f.clock.t = start.Add(lag)
	queries("refresh after a second read", 1, refresh)
	if c := get("/hot"); c.Views != 5 || !c.AsOf.Equal(start.Add(lag)) {
		t.Errorf("/hot after the refresh: %+v, want 5 views as of %s", c, start.Add(lag))
	}
	f.clock.t = start.Add(2 * lag)
	queries("refresh after a read", 1, refresh)
	f.clock.t = start.Add(3 * lag)
	queries("refresh with no read since", 0, refresh)

	// A stale reading is fetched by the next read; within the stale bound
	// the reading is served as it is, saying how old it is.
	f.views(t, "example.com", "/hot", 2)
	f.clock.t = start.Add(2*lag + f.snap.stale)
	queries("read of a reading just within stale", 0, func() {
		if c := get("/hot"); c.Views != 5 || !c.AsOf.Equal(start.Add(2*lag)) {
			t.Errorf("/hot: %+v, want the reading of %s", c, start.Add(2*lag))
		}
	})
	f.clock.t = f.clock.t.Add(time.Second)
	queries("read of a stale reading", 1, func() {
		if c := get("/hot"); c.Views != 7 || !c.AsOf.Equal(f.clock.t) {
			t.Errorf("/hot: %+v, want 7 views as of now (%s)", c, f.clock.t)
		}
	})
	queries("refresh after a fetching read", 0, refresh)

	// When the store cannot answer, a stale reading is still served: its
	// as_of says how old it is.
	f.clock.t = f.clock.t.Add(2 * lag)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	c, err := f.snap.Get(cancelled, "example.com", "/hot")
	if err != nil || c.Views != 7 || !c.AsOf.Equal(f.clock.t.Add(-2*lag)) {
		t.Errorf("stale read with the store out: %+v, %v; want the last reading", c, err)
	}
	if _, err := f.snap.Get(cancelled, "example.com", "/never-read"); err == nil {
		t.Error("first read with the store out: no error")
	}
}

// TestSnapshotWarm: Warm loads the pages with the most views over the last
// day, across sites, with their all-time counts; reads of them then need
// no store query, and a page outside the top still gets its own fetch.
func TestSnapshotWarm(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := f.clock.t
	f.clock.t = now.Add(-48 * time.Hour) // old views: count in totals, not in the ranking
	f.views(t, "example.com", "/old-hit", 50)
	f.views(t, "example.com", "/b", 7)
	f.clock.t = now.Add(-2 * time.Hour)
	f.views(t, "example.com", "/a", 9)
	f.views(t, "example.com", "/b", 6)
	f.views(t, "other.example", "/x", 8)
	f.views(t, "example.com", "/c", 1)
	f.views(t, "example.com", "/old-hit", 2)
	f.clock.t = now

	n, err := f.snap.Warm(ctx, 3)
	if err != nil || n != 3 {
		t.Fatalf("Warm = %d, %v; want 3 pages", n, err)
	}
	before := f.reads.n.Load()
	for _, w := range []struct {
		site, page string
		views      uint64
	}{{"example.com", "/b", 13}, {"example.com", "/a", 9}, {"other.example", "/x", 8}} {
		c, err := f.snap.Get(ctx, w.site, w.page)
		if err != nil || c.Views != w.views || c.Uniques != w.views || !c.AsOf.Equal(now) {
			t.Errorf("%s%s after Warm: %+v, %v; want %d views and uniques as of %s", w.site, w.page, c, err, w.views, now)
		}
	}
	if q := f.reads.n.Load() - before; q != 0 {
		t.Errorf("reads of warmed pages: %d store queries, want 0", q)
	}
	if c, err := f.snap.Get(ctx, "example.com", "/old-hit"); err != nil || c.Views != 52 || f.reads.n.Load()-before != 1 {
		t.Errorf("/old-hit (2 views in the last day: not in the top 3): %+v, %v after %d queries; want 52 views from its own fetch", c, err, f.reads.n.Load()-before)
	}
	// Nothing viewed in the last day: nothing to load, no error.
	f.clock.t = now.Add(72 * time.Hour)
	if n, err := NewSnapshot(f.reads, time.Second, 0, f.clock.now, discard()).Warm(ctx, 10); err != nil || n != 0 {
		t.Errorf("Warm with no recent views = %d, %v; want 0", n, err)
	}
}
