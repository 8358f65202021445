package api

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestPublicCountsAgree: the public counts never show more unique visitors
// than views (DESIGN.md, invariant 7). A page's and a site's all-time
// visitors are page_rollup's precision-17 sketches: exact below 4096 ids,
// then an estimate that reads above the views about as often as below
// where nearly every view is its own visitor (found beside the stats
// API's 717 views and 722 visitors). Property, over generated histories
// with a few pages of thousands of views by nearly distinct visitors:
// /count of every page and of the site, and /counts of all pages at once,
// show each page's exact views and uniques ≤ views (≥ 1 when views ≥ 1),
// /counts what /count shows.
func TestPublicCountsAgree(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			// Each seed has its own store; their queries keep two cores
			// busier together than one after the other.
			t.Parallel()
			f := newFixture(t) // one history per store: a history's batch numbers start again at 1
			rnd := rand.New(rand.NewPCG(seed, 21))
			site := fmt.Sprintf("c%d.example", seed)
			hc := storetest.HistoryConfig{Events: 16_000 + rnd.IntN(24_000), Days: 2 + rnd.IntN(3), Sites: []string{site},
				End: f.clock.t.Add(-time.Hour), Pages: 2 + rnd.IntN(3), Visitors: 500_000 + rnd.IntN(1_000_000), Seed: 200 + seed, Batch: 8_000}
			tot, err := storetest.History(t.Context(), f.store, hc)
			if err != nil {
				t.Fatal(err)
			}
			st := tot.Sites[site]
			var large int
			read := func(path string, views uint64) countResponse {
				t.Helper()
				var c countResponse
				w := f.get(t, path)
				if err := json.Unmarshal(w.Body.Bytes(), &c); w.Code != 200 || err != nil {
					t.Fatalf("seed %d: %s: %d %s", seed, path, w.Code, w.Body)
				}
				if c.Views != views || c.Uniques > c.Views || (c.Views > 0) != (c.Uniques > 0) {
					t.Errorf("seed %d: %s: %d views %d uniques, want %d views and no more uniques", seed, path, c.Views, c.Uniques, views)
				}
				if c.Views >= 4096 {
					large++
				}
				return c
			}
			read("/v1/sites/"+site+"/count", uint64(st.Valid))
			q := url.Values{}
			one := map[string]countResponse{}
			for page, days := range st.PageDay {
				var views uint64
				for _, n := range days {
					views += uint64(n)
				}
				one[page] = read("/v1/sites/"+site+"/count?page="+url.QueryEscape(page), views)
				q.Add("page", page)
			}
			var batch countsResponse
			if err := json.Unmarshal(f.get(t, "/v1/sites/"+site+"/counts?"+q.Encode()).Body.Bytes(), &batch); err != nil || len(batch.Counts) != len(one) {
				t.Fatalf("seed %d: counts: %+v %v", seed, batch, err)
			}
			for _, c := range batch.Counts {
				if o := one[c.Page]; c.Views != o.Views || c.Uniques != o.Uniques {
					t.Errorf("seed %d: counts %s: %d views %d uniques, count %d %d", seed, c.Page, c.Views, c.Uniques, o.Views, o.Uniques)
				}
			}
			if large < 2 {
				t.Errorf("seed %d: %d counts of 4096 views or more: the history proves little", seed, large)
			}
		})
	}
}
