package migrations

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// Execer is what Apply and the raw retention need of a store;
// store.Store satisfies it.
type Execer interface {
	Exec(ctx context.Context, query string, params store.Params) error
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// Apply brings the store's database up to the newest schema (All): it applies, in version order, every migration not yet recorded in
// schema_migrations, and records each once all its statements succeeded.
//
// Running it again, or from several processes at once, is harmless: every
// statement is IF NOT EXISTS, so a migration interrupted half way (or applied
// twice by a race) is simply completed, and a version recorded twice is read
// once.
func Apply(ctx context.Context, s Execer, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "migrate")
	ms, err := All()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := s.Exec(ctx, queries.Text(queries.MigrationsInit), nil); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	return apply(ctx, s, ms, migrationLog{"migrate", "schema_migrations", queries.MigrationsApplied, queries.MigrationsRecord}, logger)
}

// migrationLog is where a runner records what it applied: its name in
// errors, its table, and the queries reading and writing it.
type migrationLog struct{ what, table, applied, record string }

// apply runs, in version order, every migration the log does not record,
// recording each after its statements.
func apply(ctx context.Context, s Execer, ms []Migration, l migrationLog, logger *slog.Logger) error {
	res, err := s.Query(ctx, queries.Text(l.applied), nil)
	if err != nil {
		return fmt.Errorf("%s: read %s: %w", l.what, l.table, err)
	}
	applied := make(map[int]bool, res.Len())
	for res.Next() {
		applied[res.Int("version")] = true
	}
	if err := res.Err(); err != nil {
		return fmt.Errorf("%s: %s holds a version that does not read: %w", l.what, l.table, err)
	}
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		for i, st := range m.Statements {
			if err := s.Exec(ctx, st, nil); err != nil {
				return fmt.Errorf("%s: %03d_%s statement %d: %w", l.what, m.Version, m.Name, i+1, err)
			}
		}
		params := store.Params{"version": strconv.Itoa(m.Version), "name": m.Name}
		if err := s.Exec(ctx, queries.Text(l.record), params); err != nil {
			return fmt.Errorf("%s: record %03d_%s: %w", l.what, m.Version, m.Name, err)
		}
		logger.Info("migration applied", "log", l.table, "version", m.Version, "name", m.Name, "statements", len(m.Statements))
	}
	return nil
}
