package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/viewcount/viewcount/sql/store"
)

// countingQuerier is the real store, counting the queries that reach it, so
// a benchmark can prove every timed request was served from the snapshot.
type countingQuerier struct {
	Querier
	n atomic.Int64
}

func (q *countingQuerier) Query(ctx context.Context, query string, params store.Params) (*store.Result, error) {
	q.n.Add(1)
	return q.Querier.Query(ctx, query, params)
}

// discardWriter is a ResponseWriter that keeps the status and drops the
// body, so the benchmark measures the handler rather than a recorder.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }

// serve answers r once on w, as a fresh connection would see it.
func (w *discardWriter) serve(h http.Handler, r *http.Request) {
	clear(w.h)
	w.status = 0
	h.ServeHTTP(w, r)
}

const benchCountPath = "/v1/sites/example.com/count?page=/blog/some-post"

// newCountBench returns the api engine on a real chDB store and registry,
// with 100 views of example.com/blog/some-post already read once, so the
// snapshot holds the page; and the querier, to check nothing else is read.
func newCountBench(b *testing.B) (http.Handler, *countingQuerier) {
	b.Helper()
	f := newFixture(b)
	if _, _, err := f.sites.Add(context.Background(), "example.com"); err != nil {
		b.Fatal(err)
	}
	f.views(b, "example.com", "/blog/some-post", 100)
	// The first read is the miss that puts the page in the snapshot.
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, httptest.NewRequest(http.MethodGet, benchCountPath, nil))
	var c countResponse
	if err := json.Unmarshal(w.Body.Bytes(), &c); w.Code != http.StatusOK || err != nil || c.Views != 100 {
		b.Fatalf("warm-up read: %d %s (%v), want 100 views", w.Code, w.Body, err)
	}
	f.reads.n.Store(0)
	return f.srv, f.reads
}

// BenchmarkCountCacheHit is a public count read of a page the snapshot
// already holds: routing, site and page checks, the map lookup and the JSON
// answer, with no store query.
func BenchmarkCountCacheHit(b *testing.B) {
	h, q := newCountBench(b)
	r := httptest.NewRequest(http.MethodGet, benchCountPath, nil)
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		w.serve(h, r)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
	}
	if n := q.n.Load(); n != 0 {
		b.Fatalf("%d store queries during the benchmark, want 0 (cache hits only)", n)
	}
}

// BenchmarkCountCacheHitParallel is BenchmarkCountCacheHit from
// GOMAXPROCS goroutines at once, all reading the same page: contention on
// the snapshot's lock and the entry's lastRead.
func BenchmarkCountCacheHitParallel(b *testing.B) {
	h, q := newCountBench(b)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest(http.MethodGet, benchCountPath, nil)
		w := &discardWriter{h: http.Header{}}
		for pb.Next() {
			w.serve(h, r)
			if w.status != http.StatusOK {
				b.Errorf("status %d", w.status)
				return
			}
		}
	})
	if n := q.n.Load(); n != 0 {
		b.Fatalf("%d store queries during the benchmark, want 0 (cache hits only)", n)
	}
}
