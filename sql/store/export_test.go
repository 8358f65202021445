package store

import "context"

// EngineOnly runs query on the read-only connection without the statement
// and table checks, so tests can show the engine's readonly=1 refuses
// writes by itself.
func (r *ReadOnly) EngineOnly(ctx context.Context, query string) error {
	c := <-r.conns
	defer func() { r.conns <- c }()
	_, _, err := r.s.run(c, query, "TSV", nil)
	return err
}
