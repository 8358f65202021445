package repair

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// Rollups returns the tables materialized views fill from views_raw:
// page_rollup (counts per page), dim_rollup (the dashboard's breakdowns),
// page_views (every valid view, for one page's breakdowns),
// rejected_rollup (who was filtered: rejected events per reason, hour and
// user agent) and engagement_rollup (engagement and visit figures per
// dimension, hour and day). Each has its scripts in sql/queries/repair: NAME_prepare (a staging
// table, with what only the table still holds), NAME_fill (one month of
// views_raw, the view's own SELECT), NAME_swap (the staging table
// replaces the table's rows) and NAME_recount (the rows that differ from
// a recount). A table partitioned by month (page_views, rejected_rollup)
// is swapped a partition at a time: NAME_partitions lists them, NAME_swap
// takes {partition}, NAME_drop removes the staging table. A table
// recounted by month (dim_rollup, rejected_rollup, engagement_rollup)
// lists its months with NAME_months. Repairs, revalidations and corrections (Rebuild), `viewcount
// check` and `viewcount reconcile` (Recount) and the raw retention
// (retained) go by this list; a site's deletion finds every table with a
// site column itself. A new rollup is one more entry here and its files.
func Rollups() []string {
	return []string{migrations.PageRollupTable, migrations.DimRollupTable, migrations.PageViewsTable, migrations.RejectedRollupTable,
		migrations.EngagementRollupTable}
}

// partitioned reports whether table's swap goes a partition at a time.
func partitioned(table string) bool {
	return table == migrations.PageViewsTable || table == migrations.RejectedRollupTable
}

// IsRollup reports whether table is one of Rollups: a table rebuilt from
// views_raw by `viewcount repair rollups`.
func IsRollup(table string) bool {
	for _, r := range Rollups() {
		if r == table {
			return true
		}
	}
	return false
}

// Cutoff is the first day whose events views_raw holds in full: the day
// after the one the raw retention's TTL reaches into (TTL removes rows in
// background merges, so the boundary day may be partly gone). Rebuilds and
// recounts take everything before it from the rollups themselves. With no
// TTL it is the zero time (everything comes from views_raw).
func Cutoff(ctx context.Context, q Execer, now time.Time) (time.Time, error) {
	days, err := migrations.RawRetentionDays(ctx, q)
	if err != nil {
		return time.Time{}, err
	}
	if days == 0 {
		return time.Unix(0, 0).UTC(), nil
	}
	edge := now.UTC().AddDate(0, 0, -days)
	return time.Date(edge.Year(), edge.Month(), edge.Day()+1, 0, 0, 0, 0, time.UTC), nil
}

func cutoffParam(t time.Time) string { return t.UTC().Format(time.DateTime) }

// RebuildOptions tunes Rebuild.
type RebuildOptions struct {
	Now      time.Time                                        // for the cutoff; zero = time.Now()
	Progress func(table string, done, total int, rows uint64) // after each month; nil = none
	// Scope, when set, rebuilds only one site's rows of whole UTC days: a
	// revalidation's range. Everything else is copied as it is.
	Scope *Scope
}

// Scope is one site's days [From, To) (UTC midnights).
type Scope struct {
	Site     string
	From, To time.Time
}

// farFuture ends an unscoped rebuild's range.
var farFuture = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// Rebuild recounts every rollup from views_raw and swaps the result in,
// one rollup at a time, then drops that rollup's damaged detached parts
// (they are covered by the rebuild). It does not look at views_raw's own
// parts: a caller that finds some broken must decide first (the rebuild
// would drop the views they held). Validators must not be inserting while
// it runs: views counted by the materialized view during a rebuild would be
// overwritten by the swap.
func Rebuild(ctx context.Context, q Execer, opts RebuildOptions, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "rebuild")
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	cutoff, err := Cutoff(ctx, q, opts.Now)
	if err != nil {
		return err
	}
	// Feed what is stored first, so the rebuild and the feed agree on
	// every row: the rebuild counts the rows fed up to now, a feed after
	// it only later ones.
	if _, err := feed.CatchUp(ctx, q); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	fed, err := feed.Progress(ctx, q)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	res, err := q.Query(ctx, queries.Text(queries.RawMonths), nil)
	if err != nil {
		return fmt.Errorf("rebuild: list views_raw months: %w", err)
	}
	// The range recounted from views_raw: from the cutoff on, or the scope.
	site, from, to := "", cutoff, farFuture
	if sc := opts.Scope; sc != nil {
		site, from, to = sc.Site, later(sc.From, cutoff), sc.To
	}
	type month struct {
		name string // YYYYMM, views_raw's partition id
		n    int    // the same as a number
		rows uint64 // only for progress
	}
	var all []month
	for res.Next() {
		m := month{name: res.String("month"), rows: res.Uint64("rows")}
		var err error
		if m.n, err = strconv.Atoi(m.name); err != nil && res.Err() == nil {
			return fmt.Errorf("rebuild: views_raw month %q: %w", m.name, err)
		}
		all = append(all, m)
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("rebuild: list views_raw months: %w", err)
	}
	broken, err := BrokenParts(ctx, q)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	for _, table := range Rollups() {
		start := time.Now()
		from := from
		if opts.Scope != nil && table == migrations.EngagementRollupTable {
			// A report received in the scope's first hour counts in its
			// view's day, the day before: recount that day too (from
			// views_raw, which holds it whole), so the figures a
			// revalidation changed there are rebuilt with the rest.
			from = later(from.AddDate(0, 0, -1), cutoff)
		}
		var months []month
		for _, m := range all {
			if m.n >= yyyymm(from) && m.n <= yyyymm(to.Add(-time.Second)) {
				months = append(months, m)
			}
		}
		p := store.Params{"cutoff": cutoffParam(from), "to": cutoffParam(to), "site": site, "fed": feed.FedMap(fed)}
		if err := execScript(ctx, q, table+"_prepare", p); err != nil {
			return err
		}
		for i, m := range months {
			p["month"] = m.name
			if err := execScript(ctx, q, table+"_fill", p); err != nil {
				return fmt.Errorf("%w (month %s)", err, m.name)
			}
			if opts.Progress != nil {
				opts.Progress(table, i+1, len(months), m.rows)
			}
		}
		if table == migrations.PageRollupTable {
			if err := execScript(ctx, q, "page_rollup_totals", store.Params{"site": site}); err != nil {
				return err
			}
		}
		if err := swap(ctx, q, table, opts.Scope != nil, from, to); err != nil {
			return err
		}
		if opts.Scope != nil {
			logger.Info("rollup rebuilt for a site's range", "table", table, "site", site, "from", from, "to", to,
				"took", time.Since(start).Round(time.Millisecond))
			continue // damaged parts are a whole rebuild's business
		}
		dropped := 0
		for _, b := range broken {
			if b.Table != table {
				continue
			}
			if err := DropDetached(ctx, q, b); err != nil {
				return err
			}
			dropped++
		}
		logger.Info("rollup rebuilt from views_raw", "table", table, "months", len(months),
			"cutoff", cutoff.Format(time.DateOnly), "damaged_parts_dropped", dropped, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// swap replaces table's rows with the staging table's and drops it. A
// table partitioned by month is swapped a month at a time: every month,
// or with scoped only the months of [from, to), which alone were staged.
func swap(ctx context.Context, q Execer, table string, scoped bool, from, to time.Time) error {
	if !partitioned(table) {
		return execScript(ctx, q, table+"_swap", nil)
	}
	parts, err := q.Query(ctx, queries.Repair(table + "_partitions")[0], nil)
	if err != nil {
		return fmt.Errorf("rebuild: list %s partitions: %w", table, err)
	}
	var ids []string
	for parts.Next() {
		ids = append(ids, parts.String("partition_id"))
	}
	if err := parts.Err(); err != nil {
		return fmt.Errorf("rebuild: list %s partitions: %w", table, err)
	}
	for _, id := range ids {
		if scoped {
			n, err := strconv.Atoi(id)
			if err != nil {
				return fmt.Errorf("rebuild: %s partition %q: %w", table, id, err)
			}
			if n < yyyymm(from) || n > yyyymm(to.Add(-time.Second)) {
				continue
			}
		}
		if err := execScript(ctx, q, table+"_swap", store.Params{"partition": id}); err != nil {
			return fmt.Errorf("%w (partition %s)", err, id)
		}
	}
	return execScript(ctx, q, table+"_drop", nil)
}

// yyyymm is t's month as the tables' partitions name it.
func yyyymm(t time.Time) int { t = t.UTC(); return t.Year()*100 + int(t.Month()) }

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// DropDetached deletes a detached part's files.
func DropDetached(ctx context.Context, q Execer, p DetachedPart) error {
	if err := q.Exec(ctx, queries.Text(queries.DropDetachedPart), store.Params{"table": p.Table, "part": p.Name}); err != nil {
		return fmt.Errorf("drop detached part %s of %s: %w", p.Name, p.Table, err)
	}
	return nil
}

func execScript(ctx context.Context, q Execer, name string, p store.Params) error {
	for i, st := range queries.Repair(name) {
		if err := q.Exec(ctx, st, p); err != nil {
			return fmt.Errorf("rebuild: %s statement %d: %w", name, i+1, err)
		}
	}
	return nil
}

// Lost is what views_raw misses per site compared with the day rollup
// (sql/queries/raw_lost.sql): the views a rebuild would drop.
type Lost struct {
	Site   string `json:"site"`
	Stored uint64 `json:"stored"`
	Raw    uint64 `json:"raw"`
	Lost   uint64 `json:"lost"`
}

// RawLost lists, per site, the valid views the rollups hold that views_raw
// no longer does (from the cutoff on).
func RawLost(ctx context.Context, q Execer, now time.Time) ([]Lost, error) {
	cutoff, err := Cutoff(ctx, q, now)
	if err != nil {
		return nil, err
	}
	res, err := q.Query(ctx, queries.Text(queries.RawLost), store.Params{"cutoff": cutoffParam(cutoff)})
	if err != nil {
		return nil, fmt.Errorf("compare views_raw with the rollups: %w", err)
	}
	out := make([]Lost, 0, res.Len())
	for res.Next() {
		out = append(out, Lost{Site: res.String("site"), Stored: res.Uint64("stored"), Raw: res.Uint64("raw"), Lost: res.Uint64("lost")})
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("compare views_raw with the rollups: %w", err)
	}
	return out, nil
}
