package store

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// How often runCtx repeats its KILL QUERY while the statement it stops
// still runs: a kill sent before the engine lists the statement finds
// nothing, so it is sent again, less and less often.
const (
	killRetryFirst = 10 * time.Millisecond
	killRetryMax   = 500 * time.Millisecond
)

// runCtx is run with ctx bounding the statement itself, not only the wait
// for a connection: when ctx ends while the statement runs, runCtx stops it
// and returns ctx.Err(), wrapped, once the engine has let go of c. c is
// then replaced (see run), so the caller puts it back in its pool as
// usual; a read-only connection gets its session again. Without a deadline
// or cancellation on ctx it is run.
//
// How: libchdb cannot interrupt chdb_query_n from the calling thread, and
// its streaming cancel (chdb_stream_cancel_query) must not run while a
// fetch is in flight on the connection, so it acts only between chunks,
// and a fetch of an aggregate waits for the whole result. What stops a
// running statement is KILL QUERY from another connection. chDB has no
// query_id setting, so runCtx writes a marker comment unique in the process
// in front of the query (the engine keeps it in system.processes.query)
// and, when ctx ends, sends KILL QUERY … ASYNC for that marker on the
// store's control connection, again and again until the statement returns
// (a kill sent before the engine lists the statement finds nothing).
//
// Caveats. The engine honours a kill where it checks for one: between
// blocks for a scan, about once a second in sleep() (TestRunCtxStopsStatement);
// a step that never checks runs to its end, or to max_execution_time where
// the session sets one, and runCtx waits for it, since c can be neither
// used nor closed while the engine runs a statement on it. The marker
// shifts the positions in the engine's syntax errors by its length. When
// ctx ended during the statement, its result is dropped even if the engine
// reports success: a killed statement can come back as a success with only
// part of its rows, often none. The error wraps ctx.Err() alone, so
// errors.Is(err, context.DeadlineExceeded) or context.Canceled holds.
func (s *chdbStore) runCtx(ctx context.Context, c *chdbConn, query, format string, params Params) ([]byte, resultStats, error) {
	if err := ctx.Err(); err != nil {
		return nil, resultStats{}, fmt.Errorf("store: statement not run: %w", err)
	}
	if ctx.Done() == nil {
		return s.run(c, query, format, params)
	}
	marker := "/* viewcount-run:" + strconv.FormatUint(engine.runs.Add(1), 10) + " */ "
	finished := make(chan struct{})
	killed := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(killed)
		s.killUntil(marker, finished)
	})
	out, st, err := s.run(c, marker+query, format, params)
	close(finished)
	if stop() {
		return out, st, err // ctx did not end while the statement ran
	}
	<-killed // the kill loop holds the control connection until it returns
	if err == nil {
		// The statement may have been cut short, and a kill that came too
		// late still lists it on c: a connection a kill touched is not
		// used again, as after a failure.
		s.discard(c)
	}
	return nil, st, fmt.Errorf("store: statement stopped: %w", ctx.Err())
}

// killUntil kills the statement whose text starts with marker, from the
// control connection, until finished is closed.
func (s *chdbStore) killUntil(marker string, finished <-chan struct{}) {
	// The marker is digits in a fixed frame, so it can be spelled into the
	// statement; the KILL's own text starts with KILL, so it never matches.
	// A statement already marked killed is not killed again.
	kill := "KILL QUERY WHERE startsWith(query, '" + marker + "') AND NOT is_cancelled ASYNC"
	wait := killRetryFirst
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-finished:
			return
		case <-s.done:
			return // Close takes the control connection back
		case <-t.C:
		}
		var c *chdbConn
		select {
		case c = <-s.control:
		case <-finished:
			return
		case <-s.done:
			return
		}
		_, _, err := s.run(c, kill, "TSV", nil)
		s.control <- c
		if err != nil {
			s.logger.Warn("chdb kill query failed", "err", err)
		}
		t.Reset(wait)
		wait = min(2*wait, killRetryMax)
	}
}
