package rollup

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
)

// PendingKey is a site's page ("" for the site as a whole).
type PendingKey struct{ Site, Page string }

// UnfedViews counts, per site and page (and per site under page ""), the
// valid views views_raw holds that no feed has taken to the rollups yet:
// stored, but not in the counts. late bounds how much older than a feed's
// oldest row a later-stored row can be (the settle window: a held view is
// stored after newer ones). stored is each partition's highest batch in
// views_raw (fed or not): the stream's messages up to it are stored.
func UnfedViews(ctx context.Context, q Execer, late time.Duration) (views map[PendingKey]uint64, stored map[int]uint64, err error) {
	fed, err := FeedProgress(ctx, q)
	if err != nil {
		return nil, nil, err
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
	params := store.Params{"since": strconv.FormatInt(since.UnixMilli(), 10), "fed": fedMap(fed)}
	res, err := q.Query(ctx, sql.Query(sql.PendingUnfed), params)
	if err != nil {
		return nil, nil, fmt.Errorf("rollup: views not fed yet: %w", err)
	}
	views = make(map[PendingKey]uint64, len(res.Rows))
	for _, row := range res.Rows {
		n, err := strconv.ParseUint(row[2], 10, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("rollup: views not fed yet: %w", err)
		}
		views[PendingKey{row[0], row[1]}] += n
		views[PendingKey{row[0], ""}] += n
	}
	stored = make(map[int]uint64, len(fed))
	for p, r := range fed {
		stored[p] = r.Last
	}
	if res, err = q.Query(ctx, sql.Query(sql.PendingStored), params); err != nil {
		return nil, nil, fmt.Errorf("rollup: batches not fed yet: %w", err)
	}
	for _, row := range res.Rows {
		p, err1 := strconv.Atoi(row[0])
		b, err2 := strconv.ParseUint(row[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, nil, fmt.Errorf("rollup: batches not fed yet: bad row %q", row)
		}
		stored[p] = max(stored[p], b)
	}
	return views, stored, nil
}
