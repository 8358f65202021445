package migrations

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// RetentionDays turns a raw retention into whole days, rounding up: the
// TTL keeps at least what was asked for.
func RetentionDays(d time.Duration) int {
	return int((d + 24*time.Hour - 1) / (24 * time.Hour))
}

// retained are the tables --raw-retention applies to: views_raw and the
// rollups that keep rows per view or per user agent (page_views,
// rejected_rollup), which would otherwise grow with every event for good.
var retained = []string{RawTable, PageViewsTable, RejectedRollupTable}

// RawRetentionDays reads the days views_raw's TTL keeps rows; 0 = no TTL.
func RawRetentionDays(ctx context.Context, q Execer) (int, error) {
	return retentionDays(ctx, q, RawTable)
}

func retentionDays(ctx context.Context, q Execer, table string) (int, error) {
	res, err := q.Query(ctx, queries.Text(queries.RawRetention), store.Params{"table": table})
	if err != nil {
		return 0, fmt.Errorf("read %s retention: %w", table, err)
	}
	if res.Len() != 1 {
		return 0, fmt.Errorf("read %s retention: no %s table (migrations not applied?)", table, table)
	}
	res.Next()
	days := res.Int("days")
	if err := res.Err(); err != nil {
		return 0, fmt.Errorf("read %s retention: %w", table, err)
	}
	return days, nil
}

// ApplyRawRetention sets the TTL of views_raw, page_views and
// rejected_rollup to days where it differs. Changing it makes ClickHouse rewrite the TTL information of
// every part once, so an unchanged value costs one read of each table's
// definition and nothing else.
func ApplyRawRetention(ctx context.Context, q Execer, days int, logger *slog.Logger) error {
	if days < 1 {
		return fmt.Errorf("raw retention: %d days, want at least 1", days)
	}
	for _, table := range retained {
		cur, err := retentionDays(ctx, q, table)
		if err != nil {
			return err
		}
		if cur == days {
			continue
		}
		if err := q.Exec(ctx, queries.Text(queries.RawRetentionSet), store.Params{"table": table, "days": strconv.Itoa(days)}); err != nil {
			return fmt.Errorf("set %s retention to %d days: %w", table, days, err)
		}
		if logger != nil {
			logger.With("component", "migrate").Info("raw event retention changed", "table", table, "from_days", cur, "to_days", days)
		}
	}
	return nil
}
