package api

import (
	"context"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// benchHistory inserts n valid views of site spread over the 30 days
// before the fixture's clock and 1,000 pages, in batches of 100k, so
// page_rollup holds about one minute row per view, as a busy site's does.
// Histories with another seed differ in every row, so the store's insert
// deduplication never drops one as a repeat.
func benchHistory(b *testing.B, f *fixture, site string, n int, seed uint64) {
	b.Helper()
	pages := make([]string, 1000)
	for i := range pages {
		pages[i] = "/post/" + strconv.Itoa(i)
	}
	start := f.clock.t.AddDate(0, 0, -30)
	step := 30 * 24 * time.Hour / time.Duration(n)
	rows := make([]viewcount.Verdict, 0, 100_000)
	for i := 0; i < n; i++ {
		rows = append(rows, viewcount.Verdict{Event: viewcount.Event{Time: start.Add(time.Duration(i) * step), Site: site,
			Page: pages[(i*7919)%len(pages)], UA: "Mozilla/5.0", Visitor: seed<<32 | uint64(i%50_000)}, Reason: viewcount.Valid, Seq: uint64(i)})
		if len(rows) == cap(rows) || i == n-1 {
			if err := storetest.InsertFed(context.Background(), f.store, "", rows); err != nil {
				b.Fatal(err)
			}
			rows = rows[:0]
		}
	}
}

// BenchmarkListSites is GET /v1/admin/sites with 20 sites, one of them
// with 1M views over 30 days (about 1M minute rows in page_rollup): the
// registry read and the last-view query.
func BenchmarkListSites(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	for i := range 20 {
		if _, _, err := f.sites.Add(ctx, "site"+strconv.Itoa(i)+".example"); err != nil {
			b.Fatal(err)
		}
	}
	benchHistory(b, f, "site0.example", 1_000_000, 0)
	f.views(b, "site1.example", "/", 10)
	r := httptest.NewRequest(http.MethodGet, "/v1/admin/sites", nil)
	r.Header.Set("Authorization", "Bearer "+testAdmin)
	for b.Loop() {
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("list: %d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkDeleteSite is DELETE /v1/admin/sites/{site}?confirm= of a site
// with 1M views over 30 days, beside another site with as many: counting
// its rows and the mutations on views_raw and page_rollup, waited for.
// Each iteration registers and inserts the site again, untimed; run it
// with -benchtime 3x.
func BenchmarkDeleteSite(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	benchHistory(b, f, "kept.example", 1_000_000, 0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, _, err := f.sites.Add(ctx, "gone.example"); err != nil {
			b.Fatal(err)
		}
		benchHistory(b, f, "gone.example", 1_000_000, uint64(i+1))
		r := httptest.NewRequest(http.MethodDelete, "/v1/admin/sites/gone.example?confirm=gone.example", nil)
		r.Header.Set("Authorization", "Bearer "+testAdmin)
		w := httptest.NewRecorder()
		b.StartTimer()
		f.srv.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("delete: %d %s", w.Code, w.Body)
		}
	}
}
