package api

import (
	"context"
	"fmt"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"time"
)

// WarmPages is how many of the most viewed pages of the last day Run loads
// into the snapshot before its first refresh.
const WarmPages = 1000

// Warm loads the counts of the n pages with the most views over the last
// day (across sites) into the snapshot, so the first reads after a start
// find them. Without it the first read of a popular page, and above all a
// listing page's first batch of them, decodes each page's all-time sketch
// in the store: about 100 KB for a page with many visitors, so a batch of
// 100 such pages took 45 ms p50 and 400 ms p99 on the 10M-event history. A
// long-tail page's sketch is small, so what is left cold is cheap. Loaded
// pages are dropped like others when nobody reads them for the idle time.
// It returns how many pages it loaded.
func (s *Snapshot) Warm(ctx context.Context, n int) (int, error) {
	since := s.now().UTC().Add(-24 * time.Hour).Truncate(time.Hour)
	res, err := s.q.Query(ctx, queries.Text(queries.TopPages), store.Params{
		"since": since.Format(time.DateTime), "limit": fmt.Sprint(min(n, s.max))})
	if err != nil {
		return 0, fmt.Errorf("api: warm the snapshot: %w", err)
	}
	bySite := map[string][]string{}
	for res.Next() {
		site := res.String("site")
		bySite[site] = append(bySite[site], res.String("top_page"))
	}
	if err := res.Err(); err != nil {
		return 0, fmt.Errorf("api: warm the snapshot: %w", err)
	}
	loaded := 0
	for site, pages := range bySite {
		for len(pages) > 0 {
			chunk := pages[:min(len(pages), refreshChunk)]
			pages = pages[len(chunk):]
			counts, err := s.fetchMany(ctx, site, chunk)
			if err != nil {
				return loaded, fmt.Errorf("api: warm the snapshot: %w", err)
			}
			s.mu.Lock()
			for _, page := range chunk {
				if _, ok := s.entries[key{site, page}]; !ok { // a reader's fetch may be newer
					s.storeLocked(key{site, page}, counts[page])
					loaded++
				}
			}
			s.mu.Unlock()
		}
	}
	return loaded, nil
}
