package rollup

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
)

// RetentionDays turns a raw retention into whole days, rounding up: the
// TTL keeps at least what was asked for.
func RetentionDays(d time.Duration) int {
	return int((d + 24*time.Hour - 1) / (24 * time.Hour))
}

// RawRetentionDays reads the days views_raw's TTL keeps rows; 0 = no TTL.
func RawRetentionDays(ctx context.Context, q Execer) (int, error) {
	res, err := q.Query(ctx, sql.Query(sql.RawRetention), nil)
	if err != nil {
		return 0, fmt.Errorf("read views_raw retention: %w", err)
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return 0, fmt.Errorf("read views_raw retention: no views_raw table (migrations not applied?)")
	}
	days, err := strconv.Atoi(res.Rows[0][0])
	if err != nil {
		return 0, fmt.Errorf("read views_raw retention: %q: %w", res.Rows[0][0], err)
	}
	return days, nil
}

// ApplyRawRetention sets views_raw's TTL to days when it differs. Changing
// it makes ClickHouse rewrite the TTL information of every part once, so an
// unchanged value costs one read of the table definition and nothing else.
func ApplyRawRetention(ctx context.Context, q Execer, days int, logger *slog.Logger) error {
	if days < 1 {
		return fmt.Errorf("raw retention: %d days, want at least 1", days)
	}
	cur, err := RawRetentionDays(ctx, q)
	if err != nil {
		return err
	}
	if cur == days {
		return nil
	}
	if err := q.Exec(ctx, sql.Query(sql.RawRetentionSet), store.Params{"days": strconv.Itoa(days)}); err != nil {
		return fmt.Errorf("set views_raw retention to %d days: %w", days, err)
	}
	if logger != nil {
		logger.With("component", "migrate").Info("raw event retention changed", "table", RawTable, "from_days", cur, "to_days", days)
	}
	return nil
}
