package store

import (
	"context"

	"github.com/viewcount/viewcount/sql/analyst"
)

// EngineOnly runs query on the read-only connection without the statement
// and table checks, so tests can show the engine's readonly=1 refuses
// writes by itself.
func (r *ReadOnly) EngineOnly(ctx context.Context, query string) error {
	c := <-r.conns
	defer func() { r.conns <- c }()
	_, _, err := r.s.run(c, query, "TSV", nil)
	return err
}

// ExplainAST is the engine's EXPLAIN AST of a cleared query on the
// read-only connection, for tests that compare it with the checks.
func (r *ReadOnly) ExplainAST(ctx context.Context, q analyst.Query, params Params) (string, error) {
	c := <-r.conns
	defer func() { r.conns <- c }()
	out, _, err := r.s.run(c, "EXPLAIN AST "+q.Text(), "TabSeparatedRaw", params)
	return string(out), err
}

// SessionState is what a query could leave behind on the read-only
// connection's session: its database and settings.
func (r *ReadOnly) SessionState(ctx context.Context) (string, error) {
	c := <-r.conns
	defer func() { r.conns <- c }()
	out, _, err := r.s.run(c, "SELECT currentDatabase(), getSetting('readonly'), getSetting('max_execution_time'), getSetting('max_result_rows'), getSetting('max_memory_usage'), getSetting('max_threads'), getSetting('result_overflow_mode')", "TSV", nil)
	return string(out), err
}
