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

// AdminConn is a connection to an embedded store's engine outside every
// pool, with no limits and no read-only session, for tests that act on the
// whole engine (KILL QUERY, system.processes). It is not safe for
// concurrent use.
type AdminConn struct {
	s *chdbStore
	c *chdbConn
}

// OpenAdminConn opens an AdminConn on st's engine, in st's database. st
// must be the embedded store; close the AdminConn before st.
func OpenAdminConn(st Store) (*AdminConn, error) {
	s := st.(*chdbStore)
	c, err := s.newConn(s.session())
	if err != nil {
		return nil, err
	}
	return &AdminConn{s: s, c: c}, nil
}

// Run runs one statement and returns its output in format.
func (a *AdminConn) Run(query, format string) (string, error) {
	out, _, err := a.s.run(a.c, query, format, nil)
	return string(out), err
}

// Close closes the connection.
func (a *AdminConn) Close() {
	engine.mu.Lock()
	defer engine.mu.Unlock()
	a.s.closeConn(a.c)
}

// HeldConn is one of an embedded store's query connections, taken out of
// its pool for a test alone until Release.
type HeldConn struct {
	s *chdbStore
	c *chdbConn
}

// TakeConn takes a query connection of st, an embedded store.
func TakeConn(st Store) *HeldConn {
	s := st.(*chdbStore)
	return &HeldConn{s: s, c: <-s.queries}
}

// RunCtx runs one statement on the connection with runCtx.
func (h *HeldConn) RunCtx(ctx context.Context, query, format string, params Params) (string, error) {
	out, _, err := h.s.runCtx(ctx, h.c, query, format, params)
	return string(out), err
}

// Release puts the connection back in its pool.
func (h *HeldConn) Release() { h.s.queries <- h.c }

// RunCtx runs query with runCtx on the read-only connection, without the
// statement and table checks.
func (r *ReadOnly) RunCtx(ctx context.Context, query, format string) (string, error) {
	c := <-r.conns
	defer func() { r.conns <- c }()
	out, _, err := r.s.runCtx(ctx, c, query, format, nil)
	return string(out), err
}

// HasSysNice, ThreadsNamed and ThreadNice are chdb_nice_test.go's and
// chdb_nice.go's, for the tests of the store's nice values outside the
// package.
var (
	HasSysNice   = hasSysNice
	ThreadsNamed = threadsNamed
	ThreadNice   = threadNice
)
