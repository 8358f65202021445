package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/viewcount/viewcount/sql/analyst"
)

// Limits bound what one analyst query may use. The engine enforces them:
// they are settings of the read-only connection, fixed before readonly=1
// forbids changing any setting, so no query can lift them.
type Limits struct {
	MaxExecutionTime time.Duration // max_execution_time; default 30 s
	MaxResultRows    uint64        // max_result_rows; default 1,000,000
	MaxMemoryUsage   uint64        // max_memory_usage in bytes; default 2 GiB
}

// Limit defaults, documented in docs/configuration.md.
const (
	DefaultMaxExecutionTime = 30 * time.Second
	DefaultMaxResultRows    = 1_000_000
	DefaultMaxMemoryUsage   = 2 << 30
)

func (l *Limits) defaults() {
	if l.MaxExecutionTime <= 0 {
		l.MaxExecutionTime = DefaultMaxExecutionTime
	}
	if l.MaxResultRows == 0 {
		l.MaxResultRows = DefaultMaxResultRows
	}
	if l.MaxMemoryUsage == 0 {
		l.MaxMemoryUsage = DefaultMaxMemoryUsage
	}
}

// ErrBusy is returned (wrapped, with the context's error) when a request
// waited for the read-only connection until its context ended.
var ErrBusy = errors.New("store: the analyst connection stayed busy")

// ErrReadOnlyUnsupported is returned (wrapped) by OpenReadOnly for a store
// that cannot run analyst queries itself: the ClickHouse server store, whose
// own HTTP port and a read-only user serve analysts better.
var ErrReadOnlyUnsupported = errors.New("read-only SQL is served for the embedded store only: on a ClickHouse server use its own HTTP port with a read-only user")

// ReadOnly runs analysts' queries on a connection of its own that the
// engine holds to readonly=1 and to Limits. It runs only statements
// analyst.Check cleared (the Query type says so), and nothing of the
// service's own: that connection cannot write or change settings, and its
// session never changes (Check lets no USE or SET through).
type ReadOnly struct {
	s      *chdbStore
	limits Limits
	conns  chan *chdbConn
}

// QueryStats is what the engine reports of a finished query.
type QueryStats struct {
	RowsRead  uint64
	BytesRead uint64
	Elapsed   time.Duration
}

// OpenReadOnly opens the read-only connection on st's engine and database.
// It fails with ErrReadOnlyUnsupported unless st is the embedded store.
// Close releases it; close it before st.
func OpenReadOnly(st Store, limits Limits) (*ReadOnly, error) {
	s, ok := st.(*chdbStore)
	if !ok {
		return nil, ErrReadOnlyUnsupported
	}
	limits.defaults()
	if s.closed.Load() {
		return nil, ErrClosed
	}
	// Session settings persist on a chDB connection. readonly=1 comes last:
	// from then on the session cannot change any setting, neither with SET
	// nor with a query's SETTINGS clause. A replacement of the connection
	// (after a failed statement, see chdbStore.run) runs the same setup, and
	// is not used unless all of it succeeds.
	c, err := s.newConn([]string{
		"USE `" + s.db + "`",
		"SET max_execution_time = " + strconv.FormatInt(int64((limits.MaxExecutionTime+time.Second-1)/time.Second), 10),
		"SET max_result_rows = " + strconv.FormatUint(limits.MaxResultRows, 10),
		"SET result_overflow_mode = 'throw'",
		"SET max_memory_usage = " + strconv.FormatUint(limits.MaxMemoryUsage, 10),
		"SET readonly = 1",
	})
	if err != nil {
		return nil, fmt.Errorf("store: read-only connection: %w", err)
	}
	r := &ReadOnly{s: s, limits: limits, conns: make(chan *chdbConn, 1)}
	r.conns <- c
	return r, nil
}

// Database is the one database analysts read.
func (r *ReadOnly) Database() string { return r.s.db }

// Policy is what analysts may read here, for analyst.Check.
func (r *ReadOnly) Policy() analyst.Policy {
	return analyst.Policy{Database: r.s.db, Limits: analyst.Limits{
		MaxExecutionTime: r.limits.MaxExecutionTime, MaxResultRows: r.limits.MaxResultRows, MaxMemoryUsage: r.limits.MaxMemoryUsage,
	}}
}

// Query runs a statement analyst.Check cleared and returns its output in
// the ClickHouse format named (TabSeparated, JSON, CSV, …), or in the
// statement's own FORMAT. Before it runs, the engine's parser gives its
// opinion (EXPLAIN AST of the same text, which parses and runs nothing),
// and the statement runs only if that agrees with the checks. Errors carry
// the engine's message, "Code: N. DB::Exception: …". One query runs at a
// time. ctx bounds the whole call: the wait for the connection (ErrBusy),
// then the statements, stopped when it ends (its error, wrapped).
func (r *ReadOnly) Query(ctx context.Context, q analyst.Query, format string, params Params) ([]byte, QueryStats, error) {
	if r.s.closed.Load() {
		return nil, QueryStats{}, ErrClosed
	}
	if q.Format != "" {
		format = q.Format
	}
	if f, ok := analyst.Format(format); ok {
		format = f
	} else {
		return nil, QueryStats{}, &analyst.Error{Code: 73, Name: "UNKNOWN_FORMAT", Msg: "format " + strconv.Quote(format) + " is not offered here"}
	}
	var c *chdbConn
	select {
	case c = <-r.conns:
	case <-ctx.Done():
		return nil, QueryStats{}, fmt.Errorf("%w: %w", ErrBusy, ctx.Err())
	case <-r.s.done:
		return nil, QueryStats{}, ErrClosed
	}
	defer func() { r.conns <- c }()
	start := time.Now()
	// ctx bounds the statements too: runCtx stops one still running when
	// it ends.
	ast, _, err := r.s.runCtx(ctx, c, "EXPLAIN AST "+q.Text(), "TabSeparatedRaw", params)
	if err != nil {
		return nil, QueryStats{Elapsed: time.Since(start)}, err
	}
	if err := q.VerifyEngineAST(string(ast)); err != nil {
		return nil, QueryStats{Elapsed: time.Since(start)}, err
	}
	out, rs, err := r.s.runCtx(ctx, c, q.Text(), format, params)
	st := QueryStats{Elapsed: time.Since(start), RowsRead: rs.rowsRead, BytesRead: rs.bytesRead}
	if err != nil {
		return nil, st, err
	}
	return out, st, nil
}

// Close closes the read-only connection, waiting for a query in flight.
func (r *ReadOnly) Close() error {
	c := <-r.conns
	engine.mu.Lock()
	defer engine.mu.Unlock()
	r.s.closeConn(c)
	return nil
}
