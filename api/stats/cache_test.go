package stats_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount/api/stats"
	"github.com/viewcount/viewcount/sql/store"
)

// countingStore is the real store, counting the queries the API runs.
type countingStore struct {
	store.Store
	n atomic.Int64
}

func (s *countingStore) Query(ctx context.Context, q string, p store.Params) (*store.Result, error) {
	s.n.Add(1)
	return s.Store.Query(ctx, q, p)
}

func TestAnswerCache(t *testing.T) {
	cs := &countingStore{}
	f := newFixture(t, func(c *stats.Config) {
		cs.Store = c.Store.(store.Store)
		c.Store = cs
		c.CacheBytes = 1 << 20
	})
	const base = "/v1/sites/utc.example/stats/"
	// get answers path and returns the body and the queries it ran.
	get := func(path string) (string, int64) {
		t.Helper()
		before := cs.n.Load()
		code, body := f.get(base + path)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", path, code, body)
		}
		return body, cs.n.Load() - before
	}
	want := func(path string, wantQueries int64) string {
		t.Helper()
		body, n := get(path)
		if n != wantQueries {
			t.Errorf("GET %s ran %d queries, want %d", path, n, wantQueries)
		}
		return body
	}

	// A range that ended days ago is settled: kept however time goes on.
	past := "summary?from=2026-03-25&to=2026-03-29"
	first := want(past, 2) // totals and reasons in one query, engagement and visits in another
	if got := want(past, 0); got != first {
		t.Errorf("cached answer differs:\n%s\nwant\n%s", got, first)
	}
	f.now = f.now.Add(24 * time.Hour)
	if got := want(past, 0); got != first {
		t.Errorf("cached answer a day later differs:\n%s\nwant\n%s", got, first)
	}
	// Its CSV form is served from the same answer; the parameters' order
	// does not matter.
	if _, n := get("summary?to=2026-03-29&format=csv&from=2026-03-25"); n != 0 {
		t.Errorf("CSV of a cached answer ran %d queries, want 0", n)
	}

	// A range ending now is kept for the max-age only.
	f.now = histEnd.Add(90 * time.Second)
	live := "timeseries?interval=hour&from=2026-04-02T00:00:00Z"
	first = want(live, 1)
	f.now = f.now.Add(9 * time.Second)
	if got := want(live, 0); got != first {
		t.Errorf("cached live answer differs:\n%s\nwant\n%s", got, first)
	}
	// Then read again: the same counts (the history did not change), as of
	// the new read.
	f.now = f.now.Add(time.Second)
	if got, w := want(live, 1), strings.Replace(first, `"as_of":"2026-04-02T10:31:30Z"`, `"as_of":"2026-04-02T10:31:40Z"`, 1); got != w {
		t.Errorf("re-read live answer:\n%s\nwant\n%s", got, w)
	}
	// Other parameters are other answers; realtime is never cached.
	want("timeseries?interval=hour&from=2026-04-02T01:00:00Z", 1)
	want("realtime", 1)
	want("realtime", 1)
}
