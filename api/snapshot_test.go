package api

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestSnapshotRefreshesPagesReadAgain: a refresh re-reads only the counts
// read again since their last reading. Issue 9: reading 12k random pages
// once kept the snapshot refreshing all of them every lag for ten minutes
// (9 % of a core idle). A page read once costs its own fetch and nothing
// after; its next read fetches it anew once its reading is stale.
func TestSnapshotRefreshesPagesReadAgain(t *testing.T) {
	f := newFixture(t, nil)
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
