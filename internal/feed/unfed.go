package feed

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// UnfedViews counts into p, per site and page (and per site under page ""),
// the valid views views_raw holds that no feed has taken to the rollups
// yet: stored, but not in the counts. late bounds how much older than a
// feed's oldest row a later-stored row can be (the settle window: a held
// view is stored after newer ones). stored is each partition's highest
// batch in views_raw (fed or not): the stream's messages up to it are
// stored.
func UnfedViews(ctx context.Context, q Execer, late time.Duration, p viewcount.Pending) (stored map[int]uint64, err error) {
	fed, err := Progress(ctx, q)
	if err != nil {
		return nil, err
	}
	// Before any feed (a new store), everything stored is pending.
	since := time.Unix(0, 0)
	first := true
	for _, r := range fed {
		if first || r.Since.Before(since) {
			since, first = r.Since, false
		}
	}
	if !first && since.After(time.Unix(0, 0).Add(late+time.Minute)) {
		since = since.Add(-late - time.Minute)
	}
	params := store.Params{"since": strconv.FormatInt(since.UnixMilli(), 10), "fed": FedMap(fed)}
	res, err := q.Query(ctx, queries.Text(queries.PendingUnfed), params)
	if err != nil {
		return nil, fmt.Errorf("feed: views not fed yet: %w", err)
	}
	for res.Next() {
		site, page := res.String("site"), res.String("page")
		n, ms := res.Uint64("count()"), res.Int64("toUnixTimestamp64Milli(min(time))")
		if err := res.Err(); err != nil {
			return nil, fmt.Errorf("feed: views not fed yet: %w", err)
		}
		p.Add(site, page, n, time.UnixMilli(ms).UTC())
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("feed: views not fed yet: %w", err)
	}
	stored = make(map[int]uint64, len(fed))
	for p, r := range fed {
		stored[p] = r.Last
	}
	if res, err = q.Query(ctx, queries.Text(queries.PendingStored), params); err != nil {
		return nil, fmt.Errorf("feed: batches not fed yet: %w", err)
	}
	for res.Next() {
		part, b := res.Int("partition"), res.Uint64("max(batch)")
		stored[part] = max(stored[part], b)
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("feed: batches not fed yet: %w", err)
	}
	return stored, nil
}
