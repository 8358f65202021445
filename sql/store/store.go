// Package store holds the two adapters Viewcount keeps its data in: chDB,
// the ClickHouse engine embedded in this process (the default), and a
// ClickHouse server reached with clickhouse-go. Both run the same SQL from
// package sql/queries and behave the same through the Store interface, so rollup and
// api never know which one they have.
//
// The package never builds SQL from values: parameters are bound
// server-side through {name:Type} placeholders. It never logs query
// parameters, which may hold visitor data.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"

	"github.com/viewcount/viewcount"
)

// Config selects and configures a store.
type Config struct {
	DSN      string // empty = embedded chDB; else a clickhouse-go DSN (clickhouse://user:pass@host:9000/db)
	DataDir  string // embedded: chDB files go under DataDir/chdb
	Database string // database to create and use; default the DSN's database, else "viewcount"
	LibPath  string // libchdb.so path; empty = $CHDB_LIB_PATH, then $XDG_CACHE_HOME/viewcount/chdb/26.7.3-stable.1/libchdb.so (XDG default ~/.cache), then "libchdb.so" via the loader path
	Memory   Memory // embedded only: the engine's memory; a server sizes itself
}

// Memory bounds what the embedded engine holds. chDB's defaults are a
// server's (90 % of the machine for queries and merges, gigabytes of
// caches), which in one process beside the service would take the memory
// the rest of it needs; the engine reads these once, when it boots with
// the process's first store. Zero fields keep chDB's defaults.
type Memory struct {
	// Limit is the engine's ceiling for everything it tracks (queries,
	// inserts, merges, caches): max_server_memory_usage. A query that
	// would pass it fails with MEMORY_LIMIT_EXCEEDED and is retried by its
	// caller like any failed statement.
	Limit int64
	// MarkCache is mark_cache_size: the granule offsets of the parts
	// queries read, the one cache a stats read gains from.
	MarkCache int64
	// Caches bounds each other cache the engine fills on its own
	// (otherCaches: primary keys, index marks, query conditions, compiled
	// expressions), each to this much; the uncompressed-block and
	// query-result caches are off already.
	Caches int64
}

// serverArgs are m as chDB's server configuration overrides.
func (m Memory) serverArgs() []string {
	var a []string
	add := func(name string, v int64) {
		if v > 0 {
			a = append(a, "--"+name+"="+strconv.FormatInt(v, 10))
		}
	}
	add("max_server_memory_usage", m.Limit)
	add("mark_cache_size", m.MarkCache)
	for _, name := range otherCaches {
		add(name, m.Caches)
	}
	return a
}

// DefaultDatabase is the database used when Config.Database is empty.
const DefaultDatabase = "viewcount"

// Params holds values for a query's {name:Type} placeholders. They are sent
// to the engine beside the query and bound there, never interpolated into
// the SQL text, so any value is safe. A value is the plain text of the
// typed value ("42", "2024-01-01 00:00:00", "['a','b']", any string); the
// store applies the escaping the engine expects (ClickHouse reads parameter
// values as TSV-escaped text, where a raw tab or newline is a delimiter).
type Params map[string]string

// ArrayParam is the parameter value of an Array(String) holding vals, for
// a {name:Array(String)} placeholder; "a" and "it's" give
//
//	['a','it''s']
//
// The engine does not unescape an array's value before it parses the
// literal (a String's value it does), so the store's one escaping of every
// value must be the literal's escaping: a backslash is left for the store to
// double (the literal reads \\ as one), as are tabs and newlines, and a quote
// is doubled, the one escape that holds no backslash. Quoted with \' the
// store made it \\' and ended the string early: a page with an apostrophe
// failed its whole batch (TestArrayParam).
func ArrayParam(vals []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(v, "'", "''"))
		b.WriteByte('\'')
	}
	b.WriteByte(']')
	return b.String()
}

// otherCaches are the engine's caches that Memory.Caches bounds: those
// its defaults size in gigabytes (or a hundred MiB) and the service's
// tables can fill; the uncompressed and query caches are off already.
var otherCaches = []string{"primary_index_cache_size", "index_mark_cache_size", "query_condition_cache_size", "compiled_expression_cache_size"}

// literalEscaper quotes a string inside a ClickHouse string literal.
var literalEscaper = strings.NewReplacer(`\`, `\\`, `'`, `\'`)

// paramEscaper turns a plain value into ClickHouse's TSV-escaped parameter
// text; the engine decodes it once (deserializeTextEscaped) before parsing
// the value as its placeholder's type.
var paramEscaper = strings.NewReplacer(`\`, `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`, "\x00", `\0`)

// Store runs SQL against ClickHouse, embedded or remote. It is safe for
// concurrent use; calls may wait for a free connection, and give up when
// ctx is done (a statement chDB already runs is not interrupted). Errors are
// wrapped and carry the engine's message; the sentinels are ErrNoLibrary
// (Open), ErrBadToken (InsertViews) and ErrClosed (any call after Close).
type Store interface {
	// Exec runs one statement that returns no rows (DDL, INSERT … SELECT).
	Exec(ctx context.Context, query string, params Params) error
	// Query runs one statement and returns its rows as typed columns, read
	// by column name (see Result).
	Query(ctx context.Context, query string, params Params) (*Result, error)
	// InsertViews inserts rows into views_raw as ONE insert. A non-empty
	// token is sent as insert_deduplication_token, so a retried batch with
	// the same token is dropped by ClickHouse (and, should a materialized
	// view read views_raw, by it too: deduplicate_blocks_in_dependent_
	// materialized_views=1; since migration 012 the rollups are fed
	// apart, see feed.Run).
	// The token must match [A-Za-z0-9_.:-]+ (ErrBadToken otherwise). An
	// empty rows slice inserts nothing and returns nil.
	InsertViews(ctx context.Context, token string, rows []viewcount.Verdict) error
	// Ping checks the store answers.
	Ping(ctx context.Context) error
	// Close waits for calls in flight and releases the store. The store must
	// not be used afterwards.
	Close() error
}

// ErrNoLibrary is returned (wrapped) by Open when the embedded store is
// asked for but libchdb.so cannot be found or loaded.
var ErrNoLibrary = errors.New("libchdb.so not found or not loadable: run `make chdb` to fetch it into the cache, or set CHDB_LIB_PATH to its path")

// ErrBadToken is returned (wrapped) by InsertViews for a deduplication token
// outside [A-Za-z0-9_.:-]+.
var ErrBadToken = errors.New("bad insert deduplication token")

// Open connects to the store cfg describes and creates its database if
// missing. It does not apply migrations (see migrations.Apply).
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "store")
	if cfg.DSN == "" {
		if err := defaultDatabase(&cfg, ""); err != nil {
			return nil, err
		}
		s, err := openChDB(ctx, cfg, logger)
		if err != nil {
			return nil, err // not a typed nil in a non-nil Store
		}
		return withFaults(s), nil
	}
	s, err := openClickHouse(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	return withFaults(s), nil
}

// defaultDatabase fills in cfg.Database (the DSN's database, else
// DefaultDatabase) and checks it is a plain identifier, since it is spelled
// into CREATE DATABASE and USE.
func defaultDatabase(cfg *Config, fromDSN string) error {
	if cfg.Database == "" {
		cfg.Database = fromDSN
	}
	if cfg.Database == "" {
		cfg.Database = DefaultDatabase
	}
	if !identRE.MatchString(cfg.Database) {
		return fmt.Errorf("store: database name %q: want letters, digits and _", cfg.Database)
	}
	return nil
}

var (
	identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	tokenRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)
)

func checkToken(token string) error {
	if token != "" && (len(token) > 256 || !tokenRE.MatchString(token)) {
		return fmt.Errorf("%w: %q (want [A-Za-z0-9_.:-]{1,256})", ErrBadToken, token)
	}
	return nil
}
