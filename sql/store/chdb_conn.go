package store

import (
	"fmt"
	"strconv"
	"unsafe"
)

// chdbConn is one chDB connection. A connection runs one statement at a
// time: whoever holds it (taken from a pool channel) has it alone. Its
// engine connection is replaced whenever a statement on it fails (see run),
// so the *chdbConn a pool holds outlives the engine connections behind it.
type chdbConn struct {
	ptr   unsafe.Pointer // chdb_connection*, as chdb_connect returned it; nil while none could be opened
	setup []string       // the statements that gave it its session (USE, SET), run again on a replacement
	buf   []byte         // insert encoding buffer, reused
}

// handle is the chdb_connection the query functions take; c.ptr must not
// be nil.
func (c *chdbConn) handle() unsafe.Pointer { return *(*unsafe.Pointer)(c.ptr) }

// session is the setup of the store's own connections: its database.
func (s *chdbStore) session() []string { return []string{"USE `" + s.db + "`"} }

// mergeNice is the Linux nice value of the engine's merge threads while
// they merge. In one process beside the service a large merge of
// views_raw took both threads of a two-core box for five seconds and
// requests queued for half a second behind it (20k views/s, ~310 s in:
// docs/benchmarks/history/issue-25.md, "Merges behind requests"); at nice
// 10 a merge runs on what requests leave. The engine applies it only with
// CAP_SYS_NICE (root has it; a container's default capabilities do not);
// without, the store lowers the threads itself (mergeNicer, chdb_nice.go).
const mergeNice = 10

// connect opens one connection to the engine at s.path, booting it if this
// is the process's first. Settings given here apply to this connection only.
func (s *chdbStore) connect() (unsafe.Pointer, error) {
	var a cArgs
	defer a.unpin()
	args := []string{
		"viewcount",
		"--path=" + s.path,
		// Retried batches are dropped in views_raw and in the views' targets.
		"--insert_deduplicate=1",
		// chDB defaults async_insert to 1; an async insert is acknowledged
		// before it is written and deduplicated by other rules, so say no.
		"--async_insert=0",
		"--deduplicate_blocks_in_dependent_materialized_views=1",
		// Server configuration from here on. displayName() names the
		// service, not the host (clients such as clickhouse-go ask for it).
		"--",
		"--display_name=viewcount",
		"--os_threads_nice_value_merge_mutate=" + strconv.Itoa(mergeNice),
	}
	args = append(args, s.memory.serverArgs()...)
	p := s.lib.connect(int32(len(args)), a.cstrings(args))
	if p == nil || *(*unsafe.Pointer)(p) == nil {
		return nil, fmt.Errorf("store: chdb_connect --path=%s failed (another process using the directory? see chDB's stderr)", s.path)
	}
	return p, nil
}

// newConn opens a connection and runs setup on it. A connection whose
// setup fails is closed, never handed out: a read-only session without its
// limits must not exist.
func (s *chdbStore) newConn(setup []string) (*chdbConn, error) {
	p, err := s.connect()
	if err != nil {
		return nil, err
	}
	c := &chdbConn{ptr: p, setup: setup}
	if err := s.setUp(c); err != nil {
		s.lib.closeConn(p)
		return nil, err
	}
	return c, nil
}

// setUp runs c's setup on it.
func (s *chdbStore) setUp(c *chdbConn) error {
	for _, q := range c.setup {
		if _, _, err := s.call(c, q, "TSV", nil); err != nil {
			return fmt.Errorf("store: connection setup: %w", err)
		}
	}
	return nil
}

// redial gives c a new engine connection with c's session and closes the
// old one. It opens the new one first, so the engine never sees its last
// connection close here. When no new one can be opened, c is left without
// one (ptr nil): run then tries again before c's next statement, so a pool
// keeps its size and a transient fault heals.
func (s *chdbStore) redial(c *chdbConn) error {
	old := c.ptr
	c.ptr = nil
	p, err := s.connect()
	if err == nil {
		c.ptr = p
		if err = s.setUp(c); err != nil {
			c.ptr = nil
			s.lib.closeConn(p)
		}
	}
	if old != nil {
		s.lib.closeConn(old)
	}
	if err != nil {
		return fmt.Errorf("store: replace connection: %w", err)
	}
	return nil
}

// discard replaces c's engine connection after a failed statement (see
// run). A failed replacement is logged; the next statement on c reports it.
func (s *chdbStore) discard(c *chdbConn) {
	if err := s.redial(c); err != nil {
		s.logger.Warn("chdb connection not replaced", "err", err)
		return
	}
	s.logger.Debug("chdb connection replaced after a failed statement")
}

// ready makes sure c has an engine connection.
func (s *chdbStore) ready(c *chdbConn) error {
	if c.ptr != nil {
		return nil
	}
	return s.redial(c)
}

// closeConn closes c's engine connection; the caller holds engine.mu.
func (s *chdbStore) closeConn(c *chdbConn) {
	if c.ptr != nil {
		s.lib.closeConn(c.ptr)
		c.ptr = nil
	}
}

// closeConns closes every connection; the caller holds engine.mu.
func (s *chdbStore) closeConns() {
	for _, c := range s.conns {
		s.closeConn(c)
	}
	s.conns = nil
}

// run executes one statement on c, which the caller holds, and replaces
// c's engine connection when the statement fails. chDB keeps what a
// statement wrote before it failed (a KILL QUERY, a limit, a throwing
// function mid-result) in the connection's output buffer and hands it out
// in front of the next statement's result on that connection: only a
// success takes the buffer (ChdbClient::executeMaterializedQuery). It also
// lists the failed statement in system.processes until the connection's
// next one. So a connection is never used again after a failure, and a
// result always comes from a connection whose every earlier statement
// succeeded: the result is the statement's own.
func (s *chdbStore) run(c *chdbConn, query, format string, params Params) ([]byte, resultStats, error) {
	if err := s.ready(c); err != nil {
		return nil, resultStats{}, err
	}
	out, st, err := s.call(c, query, format, params)
	if err != nil {
		s.discard(c)
	}
	return out, st, err
}

// call is one statement on c's engine connection, with no replacement.
func (s *chdbStore) call(c *chdbConn, query, format string, params Params) ([]byte, resultStats, error) {
	q := []byte(query)
	f := []byte(format)
	qp, ql := cBytes(q)
	fp, fl := cBytes(f)
	var res unsafe.Pointer
	if len(params) == 0 {
		res = s.lib.queryN(c.handle(), qp, ql, fp, fl)
	} else {
		names := make([]string, 0, len(params))
		values := make([]string, 0, len(params))
		for k, v := range params {
			names = append(names, k)
			values = append(values, paramEscaper.Replace(v))
		}
		var a cArgs
		np, nl := a.buffers(names)
		vp, vl := a.buffers(values)
		res = s.lib.queryWithParamsN(c.handle(), qp, ql, fp, fl, np, nl, vp, vl, uintptr(len(params)))
		a.unpin()
	}
	return s.lib.cResult(res)
}
