package repair

import (
	"context"
	"log/slog"
	"time"
)

// Rebuilder is Cutoff and a site's Rebuild over one store, for a consumer
// that declares them as an interface (validate.Rebuilder, for a
// revalidation).
type Rebuilder struct {
	q      Execer
	logger *slog.Logger
}

// NewRebuilder returns a Rebuilder over q, logging to logger (nil: nowhere).
func NewRebuilder(q Execer, logger *slog.Logger) *Rebuilder {
	return &Rebuilder{q: q, logger: logger}
}

// Cutoff is Cutoff on the Rebuilder's store.
func (r *Rebuilder) Cutoff(ctx context.Context, now time.Time) (time.Time, error) {
	return Cutoff(ctx, r.q, now)
}

// RebuildSite is Rebuild of site's rows of the UTC days [from, to) (a
// Scope), now dating the cutoff and progress called after each month.
func (r *Rebuilder) RebuildSite(ctx context.Context, site string, from, to, now time.Time, progress func(table string, done, total int, rows uint64)) error {
	return Rebuild(ctx, r.q, RebuildOptions{Now: now, Scope: &Scope{Site: site, From: from, To: to}, Progress: progress}, r.logger)
}
