package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/viewcount/viewcount"
)

// chDB runs one engine per process, on one storage path. Every embedded
// store holds connections to it; the engine boots with the first
// connection and shuts down when the last one closes. A store asking for
// another path while one is open gets an error instead of silently sharing
// the first path. Stores on the same path may use different databases.
var engine struct {
	mu   sync.Mutex
	path string        // storage path while refs > 0
	refs int           // open embedded stores
	runs atomic.Uint64 // statements runCtx ran, for markers unique in the engine
}

// queryConns is how many connections a store keeps for Exec, Query and Ping.
// chDB parallelises one query internally, so a couple is enough to keep a
// long analyst query from stalling the snapshot refresh.
const queryConns = 2

// ErrClosed is returned (wrapped) by calls on a closed store.
var ErrClosed = errors.New("store closed")

type chdbStore struct {
	lib    *chdbLib
	path   string
	db     string
	memory Memory // server settings, read by the engine when it boots
	logger *slog.Logger

	queries chan *chdbConn // idle query connections
	insert  chan *chdbConn // the insert connection, when idle
	control chan *chdbConn // the connection runCtx sends KILL QUERY on, when idle
	conns   []*chdbConn    // all of them, for Close

	done      chan struct{}  // closed by Close
	renicer   sync.WaitGroup // reniceMerges, ended by done
	closed    atomic.Bool
	closeOnce sync.Once
}

func openChDB(ctx context.Context, cfg Config, logger *slog.Logger) (*chdbStore, error) {
	if cfg.DataDir == "" {
		return nil, errors.New("store: embedded chDB needs a data directory")
	}
	path, err := filepath.Abs(filepath.Join(cfg.DataDir, "chdb"))
	if err != nil {
		return nil, fmt.Errorf("store: data dir: %w", err)
	}
	if err := os.MkdirAll(path, 0o750); err != nil {
		return nil, fmt.Errorf("store: data dir: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, err := loadChDB(cfg)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}

	engine.mu.Lock()
	defer engine.mu.Unlock()
	if engine.refs > 0 && engine.path != path {
		return nil, fmt.Errorf("store: chDB already runs on %s in this process and supports one storage path; close its stores before opening %s", engine.path, path)
	}
	s := &chdbStore{
		lib:     l,
		path:    path,
		db:      cfg.Database,
		memory:  cfg.Memory,
		logger:  logger.With("engine", "chdb", "database", cfg.Database),
		queries: make(chan *chdbConn, queryConns),
		insert:  make(chan *chdbConn, 1),
		control: make(chan *chdbConn, 1),
		done:    make(chan struct{}),
	}
	start := time.Now()
	boot := engine.refs == 0
	// The first connection creates the database every connection's session
	// then uses.
	first, err := s.newConn(nil)
	if err != nil {
		return nil, err
	}
	s.conns = append(s.conns, first)
	if boot {
		s.logger.Info("chdb engine started", "path", path, "lib", l.path, "version", l.version(), "took", time.Since(start).Round(time.Millisecond))
	}
	// The database name is checked against identRE by Open; identifiers
	// cannot be bound as parameters here.
	if _, _, err := s.run(first, "CREATE DATABASE IF NOT EXISTS `"+s.db+"`", "TSV", nil); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("store: create database %s: %w", s.db, err)
	}
	first.setup = s.session()
	if err := s.setUp(first); err != nil {
		s.closeConns()
		return nil, fmt.Errorf("store: use database %s: %w", s.db, err)
	}
	// The query connections, then the control one.
	for range queryConns + 1 {
		c, err := s.newConn(s.session())
		if err != nil {
			s.closeConns()
			return nil, fmt.Errorf("store: use database %s: %w", s.db, err)
		}
		s.conns = append(s.conns, c)
	}
	s.insert <- s.conns[0]
	for _, c := range s.conns[1 : 1+queryConns] {
		s.queries <- c
	}
	s.control <- s.conns[1+queryConns]
	engine.refs++
	engine.path = path
	s.renicer.Go(s.reniceMerges)
	return s, nil
}

// take waits for a connection from pool.
func (s *chdbStore) take(ctx context.Context, pool chan *chdbConn) (*chdbConn, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case c := <-pool:
		if s.closed.Load() {
			pool <- c
			return nil, ErrClosed
		}
		return c, nil
	case <-s.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Exec runs one statement and discards its output. A statement cannot be
// interrupted once chDB runs it: ctx bounds only the wait for a connection.
func (s *chdbStore) Exec(ctx context.Context, query string, params Params) error {
	c, err := s.take(ctx, s.queries)
	if err != nil {
		return fmt.Errorf("store: exec: %w", err)
	}
	defer func() { s.queries <- c }()
	if _, _, err := s.run(c, query, "TSV", params); err != nil {
		return fmt.Errorf("store: exec: %w", err)
	}
	return nil
}

// Query runs one statement and returns its rows; see Exec about ctx.
func (s *chdbStore) Query(ctx context.Context, query string, params Params) (*Result, error) {
	c, err := s.take(ctx, s.queries)
	if err != nil {
		return nil, fmt.Errorf("store: query: %w", err)
	}
	out, _, err := s.run(c, query, "Native", params)
	if err != nil {
		s.queries <- c
		return nil, fmt.Errorf("store: query: %w", err)
	}
	res, err := decodeNative(out)
	if err == nil && len(res.Columns) == 0 {
		// chDB writes no block for an empty result, so ask for its header:
		// a result names its columns even without rows. A statement that is
		// no query (DESCRIBE refuses it) has none.
		if desc, _, derr := s.run(c, "DESCRIBE TABLE ("+query+"\n)", "Native", params); derr == nil {
			res = emptyResult(desc)
		}
	}
	s.queries <- c
	if err != nil {
		return nil, fmt.Errorf("store: query: %w", err)
	}
	return res, nil
}

// InsertViews streams rows as one Native block into views_raw on the insert
// connection, as one INSERT: binary data cannot follow FORMAT in a query
// string (a NUL would end it), which is what chDB's streaming insert is for.
func (s *chdbStore) InsertViews(ctx context.Context, token string, rows []viewcount.Verdict) error {
	if err := checkToken(token); err != nil {
		return fmt.Errorf("store: insert views: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	c, err := s.take(ctx, s.insert)
	if err != nil {
		return fmt.Errorf("store: insert views: %w", err)
	}
	defer func() { s.insert <- c }()
	c.buf = appendNative(c.buf[:0], rows)
	if cap(c.buf) > 64<<20 {
		defer func() { c.buf = nil }() // do not pin a huge buffer forever
	}
	if err := s.ready(c); err != nil {
		return fmt.Errorf("store: insert views: %w", err)
	}
	if err := s.streamInsert(c, insertQuery(token), "Native", c.buf); err != nil {
		s.discard(c) // as run does
		return fmt.Errorf("store: insert %d views: %w", len(rows), err)
	}
	return nil
}

// insertQuery is the views_raw INSERT for a checked token. The token is
// spelled into SETTINGS because settings cannot be bound as parameters;
// checkToken allows no character that could end the literal. The insert
// runs at mergeNice, as merges and feeds do: nobody waits on it but the
// partition's writer, in the background, while requests wait for a core
// (with CAP_SYS_NICE only, as the feed's; TestStoreWorkAtNice).
func insertQuery(token string) string {
	q := "INSERT INTO views_raw (" + viewsColumns + ") SETTINGS "
	if token != "" {
		q += "insert_deduplication_token = '" + token + "', "
	}
	return q + "insert_deduplicate = 1, async_insert = 0, deduplicate_blocks_in_dependent_materialized_views = 1, os_threads_nice_value_query = " + strconv.Itoa(mergeNice)
}

func (s *chdbStore) streamInsert(c *chdbConn, query, format string, data []byte) error {
	q, f := []byte(query), []byte(format)
	qp, ql := cBytes(q)
	fp, fl := cBytes(f)
	st := s.lib.streamInsertN(c.handle(), qp, ql, fp, fl)
	if st == nil {
		return errors.New("chdb_stream_insert returned NULL")
	}
	defer s.lib.destroyStream(st) // required on every path; cancels if not done
	if msg := s.lib.streamInsertError(st); msg != "" {
		return errors.New(trimEngineError(msg))
	}
	dp, dl := cBytes(data)
	if rc := s.lib.streamAppend(st, dp, dl); rc != 0 {
		msg := s.lib.streamInsertError(st)
		if msg == "" {
			msg = "chdb_stream_append failed"
		}
		return errors.New(trimEngineError(msg))
	}
	_, _, err := s.lib.cResult(s.lib.streamDone(st))
	return err
}

// Ping runs a trivial query.
func (s *chdbStore) Ping(ctx context.Context) error {
	_, err := s.Query(ctx, "SELECT 1", nil)
	return err
}

// Close waits for calls in flight, closes the connections and, with the
// process's last embedded store, shuts the engine down.
func (s *chdbStore) Close() error {
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		close(s.done)
		s.renicer.Wait()
		// Take back every connection: each is returned when its call ends.
		for range cap(s.queries) {
			<-s.queries
		}
		<-s.insert
		<-s.control
		engine.mu.Lock()
		defer engine.mu.Unlock()
		s.closeConns()
		engine.refs--
		if engine.refs == 0 {
			engine.path = ""
			s.logger.Info("chdb engine stopped", "path", s.path)
		}
	})
	return nil
}

// trimEngineError shortens chDB's error text to its first paragraph: the
// engine may append a stack trace.
func trimEngineError(msg string) string {
	msg = strings.TrimSpace(msg)
	if i := strings.Index(msg, "\nStack trace"); i > 0 {
		msg = strings.TrimSpace(msg[:i])
	}
	return msg
}
