package repair

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// Execer is what the part checks, rebuilds and recounts need of a store;
// store.Store satisfies it.
type Execer interface {
	Exec(ctx context.Context, query string, params store.Params) error
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// HealthSetter receives the state of the store's parts;
// viewcount.Metrics satisfies it.
type HealthSetter interface {
	SetHealth(part string, err error)
}

// HealthPart is the health part name broken store parts are reported under.
const HealthPart = "store_parts"

// DetachedPart is a data part ClickHouse set aside because it could not
// trust it (see sql/queries/detached_parts.sql): its rows are no longer
// read, so every count that includes them is short.
type DetachedPart struct {
	Table     string `json:"table"`
	Name      string `json:"part"`
	Reason    string `json:"reason"`
	Partition string `json:"partition"`
	Bytes     int64  `json:"bytes"`
	Modified  string `json:"modified"`
	// Covered: an active part holds the same rows (the damaged one was
	// outdated, merged already and waiting for deletion), so nothing is
	// missing and the part only takes disk space.
	Covered bool `json:"covered"`
}

// Harmful returns the parts whose rows are missing (not Covered).
func Harmful(parts []DetachedPart) []DetachedPart {
	var out []DetachedPart
	for _, p := range parts {
		if !p.Covered {
			out = append(out, p)
		}
	}
	return out
}

// Advice says what an operator does about a broken part of table.
func Advice(table string) string {
	switch {
	case IsRollup(table):
		return "counts and breakdowns read from this table are short; stop the server and run `viewcount repair rollups` (rebuilds it from views_raw), then `viewcount check`"
	case table == migrations.RawTable:
		return "the part's events are gone from views_raw and would be lost from the rollups by a rebuild; the rollups still count them. " +
			"Run `viewcount check` to see what is missing; the stream still holds the last --retention of events (docs/operations.md, Recovery). " +
			"`viewcount repair rollups --force` accepts the loss"
	}
	return "not a table Viewcount rebuilds: restore it from a backup (docs/operations.md, Recovery)"
}

// BrokenParts lists the damaged detached parts of the store's database.
func BrokenParts(ctx context.Context, q Execer) ([]DetachedPart, error) {
	res, err := q.Query(ctx, queries.Text(queries.DetachedParts), nil)
	if err != nil {
		return nil, fmt.Errorf("list detached parts: %w", err)
	}
	rows, err := store.ScanAll[queries.DetachedPartsRow](res)
	if err != nil {
		return nil, fmt.Errorf("list detached parts: %w", err)
	}
	parts := make([]DetachedPart, 0, len(rows))
	for _, r := range rows {
		parts = append(parts, DetachedPart{Table: r.Table, Name: r.Name, Reason: deref(r.Reason), Partition: deref(r.PartitionId),
			Bytes: int64(min(r.BytesOnDisk, math.MaxInt64)), Modified: r.Modified, Covered: r.Covered == 1})
	}
	return parts, nil
}

// PartsMonitor reports broken store parts loudly: each one at ERROR level
// when first seen, and the health part "store_parts" failing for as long as
// any is left, so /readyz and /metrics show the damage until an operator
// repairs it (docs/operations.md, Recovery;
// TestBrokenRollupPartIsLoudAndRebuilt): a truncated rollup part set aside
// in silence cuts a site's count with nothing to say why.
type PartsMonitor struct {
	q      Execer
	health HealthSetter
	every  time.Duration
	logger *slog.Logger
	// Only Check's goroutine touches these.
	seen    map[string]bool // table/part already logged
	failing bool            // the health was last set failing
}

// NewPartsMonitor returns a monitor that checks every `every` (a minute if
// zero) once Run is called.
func NewPartsMonitor(q Execer, health HealthSetter, every time.Duration, logger *slog.Logger) *PartsMonitor {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if every <= 0 {
		every = time.Minute
	}
	return &PartsMonitor{q: q, health: health, every: every, logger: logger.With("component", "store_parts"), seen: map[string]bool{}}
}

// Check lists the broken parts once, logs the new ones and sets the health.
// A store that cannot answer leaves the health as it was (the store's own
// check reports that) and returns the error. Not safe for concurrent use:
// call it before Run or let Run call it.
func (m *PartsMonitor) Check(ctx context.Context) error {
	parts, err := BrokenParts(ctx, m.q)
	if err != nil {
		return err
	}
	now := map[string]bool{}
	for _, p := range parts {
		key := p.Table + "/" + p.Name
		now[key] = true
		if m.seen[key] {
			continue
		}
		if p.Covered {
			m.logger.Warn("outdated store part set aside as damaged: a newer part holds its rows, nothing is missing",
				"table", p.Table, "part", p.Name, "reason", p.Reason, "bytes", p.Bytes, "action", "`viewcount repair rollups` (server stopped) deletes it")
			continue
		}
		m.logger.Error("store part set aside as damaged: its rows are no longer read",
			"table", p.Table, "part", p.Name, "reason", p.Reason, "partition", p.Partition, "bytes", p.Bytes, "action", Advice(p.Table))
	}
	harmful := Harmful(parts)
	if len(harmful) == 0 && m.failing {
		m.logger.Info("no damaged store parts left")
	}
	m.failing = len(harmful) > 0
	m.seen = now
	m.health.SetHealth(HealthPart, PartsProblem(harmful))
	return nil
}

// PartsProblem summarises harmful parts for /readyz; nil when there are
// none.
func PartsProblem(parts []DetachedPart) error {
	if len(parts) == 0 {
		return nil
	}
	per := map[string]int{}
	for _, p := range parts {
		per[p.Table]++
	}
	tables := make([]string, 0, len(per))
	for t, n := range per {
		tables = append(tables, fmt.Sprintf("%s (%d)", t, n))
	}
	sort.Strings(tables)
	action := "run `viewcount repair rollups` with the server stopped"
	if per[migrations.RawTable] > 0 {
		action = "views_raw lost events: run `viewcount check`, see docs/operations.md, Recovery"
	}
	return fmt.Errorf("%d damaged part(s) set aside: %s; %s", len(parts), strings.Join(tables, ", "), action)
}

// Run checks every period until ctx is done, and returns nil then; the
// check at start is the caller's Check, so a damaged store is reported
// before the process serves. Failed checks are logged and retried at the
// next tick.
func (m *PartsMonitor) Run(ctx context.Context) error {
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := m.Check(ctx); err != nil && ctx.Err() == nil {
			m.logger.Warn("checking store parts failed; retrying", "err", err, "in", m.every)
		}
	}
}

// deref is a Nullable(String) as TSV printed it: NULL as \N.
func deref(s *string) string {
	if s == nil {
		return `\N`
	}
	return *s
}
