package rollup

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store"
)

// Execer is what Migrate, the part checks and the repairs need of a
// store; store.Store satisfies it.
type Execer interface {
	Exec(ctx context.Context, query string, params store.Params) error
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// Migrate brings the store's database up to the newest schema in package
// sql: it applies, in version order, every migration not yet recorded in
// schema_migrations, and records each once all its statements succeeded.
//
// Running it again, or from several processes at once, is harmless: every
// statement is IF NOT EXISTS, so a migration interrupted half way (or applied
// twice by a race) is simply completed, and a version recorded twice is read
// once.
func Migrate(ctx context.Context, s Execer, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "migrate")
	migrations, err := sql.Migrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if err := s.Exec(ctx, sql.Query(sql.MigrationsInit), nil); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	res, err := s.Query(ctx, sql.Query(sql.MigrationsApplied), nil)
	if err != nil {
		return fmt.Errorf("migrate: read schema_migrations: %w", err)
	}
	applied := make(map[int]bool, len(res.Rows))
	for _, row := range res.Rows {
		v, err := strconv.Atoi(row[0])
		if err != nil {
			return fmt.Errorf("migrate: schema_migrations holds version %q: %w", row[0], err)
		}
		applied[v] = true
	}
	for _, m := range migrations {
		if applied[m.Version] {
			continue
		}
		for i, st := range m.Statements {
			if err := s.Exec(ctx, st, nil); err != nil {
				return fmt.Errorf("migrate: %03d_%s statement %d: %w", m.Version, m.Name, i+1, err)
			}
		}
		params := store.Params{"version": strconv.Itoa(m.Version), "name": m.Name}
		if err := s.Exec(ctx, sql.Query(sql.MigrationsRecord), params); err != nil {
			return fmt.Errorf("migrate: record %03d_%s: %w", m.Version, m.Name, err)
		}
		logger.Info("migration applied", "version", m.Version, "name", m.Name, "statements", len(m.Statements))
	}
	return nil
}
