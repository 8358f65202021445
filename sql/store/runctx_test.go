package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// A context that ends stops the statement it bounds, well before the
// statement would end by itself, and leaves its connection answering the
// next statement with that statement's own result.
func TestRunCtxStopsStatement(t *testing.T) {
	st := storetest.Open(t)
	h := store.TakeConn(st)
	defer h.Release()

	// Each statement would run far longer than limit (minutes, and 9 s);
	// a stopped one returns within the kill's reach (a block, or about a
	// second for sleep), which limit bounds with room for a busy machine.
	const limit = 5 * time.Second
	f := func(name, query string, end func() (context.Context, context.CancelFunc), want error) {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := end()
			defer cancel()
			start := time.Now()
			out, err := h.RunCtx(ctx, query, "TSV", nil)
			if took := time.Since(start); !errors.Is(err, want) || out != "" || took > limit {
				t.Errorf("got %q, %v after %v; want %v within %v", out, err, took.Round(time.Millisecond), want, limit)
			}
			if out, err := h.RunCtx(t.Context(), "SELECT 'next'", "TSV", nil); err != nil || out != "next\n" {
				t.Errorf("next statement: %q, %v; want its own result", out, err)
			}
		})
	}
	after := func(d time.Duration) func() (context.Context, context.CancelFunc) {
		return func() (context.Context, context.CancelFunc) { return context.WithTimeout(t.Context(), d) }
	}
	cancelAfter := func(d time.Duration) func() (context.Context, context.CancelFunc) {
		return func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(t.Context())
			time.AfterFunc(d, cancel)
			return ctx, cancel
		}
	}
	const scan = "SELECT count() FROM numbers(1e11)"
	f("scan deadline", scan, after(200*time.Millisecond), context.DeadlineExceeded)
	f("scan cancel", scan, cancelAfter(200*time.Millisecond), context.Canceled)
	f("sleep deadline", "SELECT sleep(3) FROM numbers(3) SETTINGS max_block_size = 1", after(200*time.Millisecond), context.DeadlineExceeded)
	// The context may end before the engine lists the statement, when a
	// kill finds nothing; runCtx sends it again until the statement ends.
	f("1 ms deadline", scan, after(time.Millisecond), context.DeadlineExceeded)
	f("ended before", scan, func() (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		return ctx, cancel
	}, context.Canceled)

	// A statement done before its deadline is not touched, parameters and
	// all; an engine error stays the engine's.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if out, err := h.RunCtx(ctx, "SELECT {x:String}", "TSV", store.Params{"x": "a b"}); err != nil || out != "a b\n" {
		t.Errorf("statement within its deadline: %q, %v", out, err)
	}
	if _, err := h.RunCtx(ctx, "SELEC 1", "TSV", nil); err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("syntax error within the deadline: %v, want the engine's error", err)
	}
}

// A statement stopped on the read-only connection leaves it with its
// session: the replacement connection is set up as the first was.
func TestRunCtxKeepsReadOnlySession(t *testing.T) {
	st := storetest.Open(t)
	ro, err := store.OpenReadOnly(st, store.Limits{MaxResultRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if out, err := ro.RunCtx(ctx, "SELECT count() FROM numbers(1e11)", "TSV"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %q, %v; want the deadline", out, err)
	}
	out, err := ro.SessionState(t.Context())
	if want := ro.Database() + "\t1\t"; err != nil || !strings.HasPrefix(out, want) || !strings.Contains(out, "\t1000\t") {
		t.Errorf("session after the kill: %q, %v; want readonly=1 and max_result_rows 1000 in %s", out, err, ro.Database())
	}
	if err := ro.EngineOnly(t.Context(), "SET readonly = 0"); err == nil {
		t.Error("the replaced read-only connection accepted SET readonly = 0")
	}
}
