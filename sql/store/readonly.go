package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Limits bound what one analyst query may use. The engine enforces them:
// they are settings of the read-only connection, fixed before readonly=1
// forbids changing any setting, so no query can lift them.
type Limits struct {
	MaxExecutionTime time.Duration // max_execution_time; default 30 s
	MaxResultRows    uint64        // max_result_rows; default 1,000,000
	MaxMemoryUsage   uint64        // max_memory_usage in bytes; default 2 GiB
}

// Limit defaults, documented in the README's flag table.
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

// ErrReadOnlyUnsupported is returned (wrapped) by OpenReadOnly for a store
// that cannot run analyst queries itself: the ClickHouse server store, whose
// own HTTP port and a read-only user serve analysts better.
var ErrReadOnlyUnsupported = errors.New("read-only SQL is served for the embedded store only: on a ClickHouse server use its own HTTP port with a read-only user")

// ReadOnly runs analysts' queries on a connection of its own that the
// engine holds to readonly=1 and to Limits. It must never run a statement
// of the service's own: that connection cannot write or change settings.
type ReadOnly struct {
	s     *chdbStore
	conns chan *chdbConn
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
	r := &ReadOnly{s: s, conns: make(chan *chdbConn, 1)}
	r.conns <- c
	return r, nil
}

// Database is the one database analysts read.
func (r *ReadOnly) Database() string { return r.s.db }

// Query runs query and returns its output in the ClickHouse format named
// (TabSeparated, JSON, CSV, …; a FORMAT clause in the query wins, as in
// ClickHouse). Errors carry the engine's message, "Code: N. DB::Exception:
// …". One query runs at a time; ctx bounds the wait for the connection.
func (r *ReadOnly) Query(ctx context.Context, query, format string, params Params) ([]byte, QueryStats, error) {
	if r.s.closed.Load() {
		return nil, QueryStats{}, ErrClosed
	}
	var c *chdbConn
	select {
	case c = <-r.conns:
	case <-ctx.Done():
		return nil, QueryStats{}, ctx.Err()
	case <-r.s.done:
		return nil, QueryStats{}, ErrClosed
	}
	defer func() { r.conns <- c }()
	start := time.Now()
	if err := r.checkTables(c, query, params); err != nil {
		return nil, QueryStats{Elapsed: time.Since(start)}, err
	}
	out, rs, err := r.s.run(c, query, format, params)
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

// readableDBs are the databases an analyst query may name besides the
// store's own: the engine's catalogues, which clients read on connect.
var readableDBs = map[string]bool{"system": true, "information_schema": true, "INFORMATION_SCHEMA": true}

// readableFuncs are the table functions that read no table and no outside
// source. readonly=1 already refuses file(), url(), remote(), s3() and the
// like; merge() and a few others it allows could read another database.
var readableFuncs = map[string]bool{"numbers": true, "numbers_mt": true, "zeros": true, "zeros_mt": true, "generateRandom": true, "values": true, "generate_series": true, "generateSeries": true, "one": true}

// readableStatements are the statement kinds (the root of the engine's
// EXPLAIN AST) an analyst may run. readonly=1 refuses writes, DDL and
// settings changes, but lets through statements that act on the shared
// engine (SYSTEM STOP MERGES, KILL QUERY) or on the session (USE), so only
// these run at all.
var readableStatements = map[string]bool{
	"SelectWithUnionQuery": true, "SelectQuery": true, "SelectIntersectExceptQuery": true,
	"Explain": true, "ShowTables": true, "ShowColumns": true, "ShowIndexes": true,
	"DescribeQuery": true, "ExistsTableQuery": true, "ExistsDatabaseQuery": true, "ExistsViewQuery": true,
	"ExistsDictionaryQuery": true, "ShowCreateTableQuery": true, "ShowCreateViewQuery": true,
	"ShowCreateDatabaseQuery": true, "ShowCreateDictionaryQuery": true, "ShowSettingQuery": true,
	"ShowFunctions": true, "ShowEngineQuery": true, "ShowDatabases": true,
}

// checkTables asks the engine's parser what kind of statement the query is
// and refuses every kind but readableStatements; then it asks the analyzer
// which tables the query reads (EXPLAIN QUERY TREE resolves every name,
// views and subqueries included) and refuses one in another database, with
// ClickHouse's ACCESS_DENIED. SHOW and DESCRIBE, which the analyzer does
// not take, can show another database's metadata, never its rows.
func (r *ReadOnly) checkTables(c *chdbConn, query string, params Params) error {
	// A FORMAT clause would apply to the EXPLAIN's own output; the checks
	// read it as TabSeparatedRaw, and refuse whatever they cannot read.
	q := formatClause.ReplaceAllString(query, "")
	ast, _, err := r.s.run(c, "EXPLAIN AST "+q, "TabSeparatedRaw", params)
	if err != nil {
		return err
	}
	first, _, _ := strings.Cut(string(ast), "\n")
	kind, _, _ := strings.Cut(first, " ")
	if !readableStatements[kind] {
		if !kindRE.MatchString(kind) {
			kind = "this statement"
		}
		return refused(164, "READONLY", kind+" cannot run here: only SELECT, SHOW, DESCRIBE, EXISTS and EXPLAIN, with at most a FORMAT clause at the end")
	}
	if !strings.HasPrefix(kind, "Select") {
		return nil
	}
	out, _, err := r.s.run(c, "EXPLAIN QUERY TREE "+q, "TabSeparatedRaw", params)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(string(out), "QUERY id: ") {
		return refused(164, "READONLY", "the tables this query reads cannot be checked; put FORMAT at the very end")
	}
	for line := range strings.SplitSeq(string(out), "\n") {
		if name, ok := field(line, "table_name: "); ok {
			db, _, found := strings.Cut(name, ".")
			if found && db != r.s.db && !readableDBs[db] {
				return refused(497, "ACCESS_DENIED", "reading database "+db+" is not allowed; only "+r.s.db+", system and information_schema")
			}
		}
		if name, ok := field(line, "table_function_name: "); ok && !readableFuncs[name] {
			return refused(497, "ACCESS_DENIED", "table function "+name+"() is not allowed")
		}
	}
	return nil
}

var (
	// formatClause is a trailing FORMAT clause (and semicolon).
	formatClause = regexp.MustCompile(`(?is)\bFORMAT\s+[A-Za-z][A-Za-z0-9]*\s*;?\s*$`)
	kindRE       = regexp.MustCompile(`^[A-Za-z]+$`)
)

// field is the value after key on an EXPLAIN QUERY TREE line, up to the
// next comma.
func field(line, key string) (string, bool) {
	_, v, ok := strings.Cut(line, key)
	if !ok {
		return "", false
	}
	v, _, _ = strings.Cut(v, ",")
	return strings.Trim(strings.TrimSpace(v), "\"`"), true
}

// refusal is a query the checks refused, worded as the engine words its
// own errors ("Code: N. DB::Exception: …. (NAME)"), so callers handle both
// alike.
type refusal struct {
	code       int
	name, text string
}

func refused(code int, name, text string) error { return refusal{code, name, text} }

func (r refusal) Error() string {
	return "Code: " + strconv.Itoa(r.code) + ". DB::Exception: analyst: " + r.text + ". (" + r.name + ")"
}
