package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// cancelled reports whether err is the engine's answer to KILL QUERY.
func cancelled(err error) bool { return strings.Contains(err.Error(), "(QUERY_WAS_CANCELLED)") }

// tokenQuery is a statement whose result names itself: rows rows of
// (tok, n = row number, extra copies of n, s = 0), written out in blocks
// of 8 rows, one every few milliseconds, so a kill or a failure can land
// after part of the result is written. Test-only SQL.
func tokenQuery(tok string, extra, rows int) string {
	var cols strings.Builder
	for k := range extra {
		fmt.Fprintf(&cols, ", number AS c%d", k)
	}
	return fmt.Sprintf("SELECT '%s' AS tok, number AS n%s, sleepEachRow(0.0003) AS s FROM numbers(%d) SETTINGS max_block_size = 8", tok, cols.String(), rows)
}

// checkTokenResult says how res differs from tokenQuery(tok, extra, rows)'s
// result, or "" if it is that result or the start of it. It returns
// whether the result was cut short: a statement a KILL QUERY hits may come
// back from chDB as a success with only the rows written before the kill
// (often none), which this layer cannot tell from a whole result.
func checkTokenResult(res *store.Result, tok string, extra, rows int) (diff string, short bool) {
	cols := []string{"tok", "n"}
	for k := range extra {
		cols = append(cols, "c"+strconv.Itoa(k))
	}
	cols = append(cols, "s")
	if !slices.Equal(res.Columns, cols) {
		return fmt.Sprintf("columns %q, want %q", res.Columns, cols), false
	}
	if len(res.TextRows()) > rows {
		return fmt.Sprintf("%d rows, want %d", len(res.TextRows()), rows), false
	}
	for i, r := range res.TextRows() {
		n := strconv.Itoa(i)
		if r[0] != tok || r[1] != n || r[len(r)-1] != "0" || slices.ContainsFunc(r[2:len(r)-1], func(c string) bool { return c != n }) {
			return fmt.Sprintf("row %d is %q", i, r), false
		}
	}
	return "", len(res.TextRows()) < rows
}

// checkPool runs more statements than the store has query connections, one
// after another, so one of them runs on every connection, and fails the
// test unless each returns its own result in the store's database; then the
// same on the read-only connection, which must also have kept its session.
func checkPool(t *testing.T, st store.Store, ro *store.ReadOnly) {
	t.Helper()
	db := ""
	for j := range 3 {
		tok := "after-" + strconv.Itoa(j)
		res, err := st.Query(t.Context(), "SELECT '"+tok+"' AS tok, currentDatabase() AS db", nil)
		if err != nil {
			t.Errorf("query %d after: %v", j, err)
			continue
		}
		if !slices.Equal(res.Columns, []string{"tok", "db"}) || len(res.TextRows()) != 1 || len(res.TextRows()[0]) != 2 || res.TextRows()[0][0] != tok {
			t.Errorf("query %d after: got %q %.200q, want its own result", j, res.Columns, res.TextRows())
			continue
		}
		if db == "" {
			db = res.TextRows()[0][1]
		}
		if res.TextRows()[0][1] != db {
			t.Errorf("query %d after: database %s, another connection's is %s", j, res.TextRows()[0][1], db)
		}
	}
	if ro == nil {
		return
	}
	out, err := roQuery(t.Context(), ro, "SELECT 'after-ro' AS tok", "TSVWithNames")
	if err != nil || string(out) != "tok\nafter-ro\n" {
		t.Errorf("read-only query after: %.200q, %v; want its own result", out, err)
	}
	state, err := ro.SessionState(t.Context())
	if err != nil || !strings.HasPrefix(state, ro.Database()+"\t1\t") || !strings.HasSuffix(state, "\tthrow\n") {
		t.Errorf("read-only session after: %q, %v; want its database, readonly=1 and result_overflow_mode=throw", state, err)
	}
}

// A statement that fails after writing part of its result leaves that part
// to no one: chDB keeps it in the connection's output buffer and would put
// it in front of the next statement's result on that connection (see
// chdbStore.run). The failure here is a function throwing mid-result, so
// the test is exact; a KILL QUERY leaves the same (TestKillStormKeepsResultsOwn).
func TestFailedStatementLeavesNoOutput(t *testing.T) {
	st := storetest.Open(t)
	ro, err := store.OpenReadOnly(st, store.Limits{MaxResultRows: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	// 500 rows in 50 blocks are written before throwIf throws.
	const failing = "SELECT 'partial' AS leftover, number, throwIf(number = 500) FROM numbers(1000) SETTINGS max_block_size = 10"
	f := func(name string, fail func() error) {
		t.Run(name, func(t *testing.T) {
			if err := fail(); err == nil || !strings.Contains(err.Error(), "(FUNCTION_THROW_IF_VALUE_IS_NON_ZERO)") {
				t.Fatalf("failing statement: err = %v", err)
			}
			checkPool(t, st, ro)
		})
	}
	f("Query", func() error { _, err := st.Query(t.Context(), failing, nil); return err })
	f("Exec", func() error { return st.Exec(t.Context(), failing, nil) })
	// The read-only session cannot set max_block_size: its first block of
	// 65409 rows is written before the second one throws.
	f("ReadOnly", func() error {
		_, err := roQuery(t.Context(), ro, "SELECT 'partial' AS leftover, number, throwIf(number = 70000) FROM numbers(80000)", "TSVWithNames")
		return err
	})
}

// Under a storm of KILL QUERY (what an attacker with SQL access sent, and
// an operator may send), every result the store hands out is the one its
// statement asked for: a killed statement fails with QUERY_WAS_CANCELLED and
// nothing of it reaches another caller, on the query, insert and read-only
// connections alike. Each worker runs a fixed number of statements; the
// killer runs until they are done, so the test is bounded by iterations.
func TestKillStormKeepsResultsOwn(t *testing.T) {
	st := migrated(t, openTestStore)
	ro, err := store.OpenReadOnly(st, store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	killer, err := store.OpenAdminConn(st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(killer.Close)

	const iters = 30
	ctx := t.Context()
	var (
		mu       sync.Mutex
		outcomes = map[string]int{} // "kind outcome" → statements, for the log
	)
	note := func(kind, outcome string) {
		mu.Lock()
		outcomes[kind+" "+outcome]++
		mu.Unlock()
	}
	// failed notes a failed statement and fails the test unless a kill
	// explains it (or, on the read-only connection, a refusal by the
	// checks: a killed EXPLAIN can come back cut short, and the checks
	// refuse what they cannot read).
	failed := func(kind string, err error) {
		switch {
		case cancelled(err):
			note(kind, "cancelled")
		case kind == "read-only" && strings.Contains(err.Error(), "DB::Exception: analyst: "):
			note(kind, "refused")
		default:
			t.Errorf("%s: %v (only a kill may fail a statement here)", kind, err)
		}
	}
	// got checks a statement's result: its own, or the start of it.
	got := func(kind, tok, diff string, short bool) {
		switch {
		case diff != "":
			t.Errorf("%s %s got another statement's result: %s", kind, tok, diff)
		case short:
			note(kind, "cut short")
		default:
			note(kind, "ok")
		}
	}

	var workers sync.WaitGroup
	for w := range 2 {
		workers.Go(func() {
			for i := range iters {
				tok := fmt.Sprintf("storm-q%d-%d", w, i)
				rows := 40 + 3*i + 7*w
				res, err := st.Query(ctx, tokenQuery(tok, w, rows), nil)
				if err != nil {
					failed("query", err)
					continue
				}
				diff, short := checkTokenResult(res, tok, w, rows)
				got("query", tok, diff, short)
			}
		})
	}
	workers.Go(func() {
		for i := range iters {
			if err := st.Exec(ctx, tokenQuery(fmt.Sprintf("storm-e-%d", i), 3, 60+5*i), nil); err != nil {
				failed("exec", err)
			} else {
				note("exec", "ok")
			}
		}
	})
	acked := make([]bool, iters)
	workers.Go(func() {
		for i := range iters {
			err := st.InsertViews(ctx, fmt.Sprintf("storm-ins-%d", i), makeFixture(40, uint64(7000+i), time.Now()).rows)
			if acked[i] = err == nil; err != nil {
				failed("insert", err)
			} else {
				note("insert", "ok")
			}
		}
	})
	workers.Go(func() {
		for i := range iters / 2 {
			// Two blocks (65409 rows, then the rest), the first written
			// before the second is read.
			tok, rows := fmt.Sprintf("storm-ro-%d", i), 70_000+i
			q := fmt.Sprintf("SELECT '%s' AS tok, number AS n, ignore(cityHash64(toString(number))) AS s FROM numbers(%d)", tok, rows)
			out, err := roQuery(ctx, ro, q, "TSVWithNames")
			if err != nil {
				failed("read-only", err)
				continue
			}
			var want strings.Builder
			want.WriteString("tok\tn\ts\n")
			for n := range rows {
				fmt.Fprintf(&want, "%s\t%d\t0\n", tok, n)
			}
			diff := ""
			if !strings.HasPrefix(string(out), "tok\tn\ts\n") || !strings.HasPrefix(want.String(), string(out)) || !strings.HasSuffix(string(out), "\n") {
				diff = fmt.Sprintf("%d bytes, want %d; starts %.120q", len(out), want.Len(), out)
			}
			got("read-only", tok, diff, len(out) < want.Len())
		}
	})
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()

	// The killer: the attacker's statement (every query but its own), every
	// statement of this test, or one statement by its query_id.
	rng := rand.New(rand.NewPCG(4, 4))
	kills := 0
storm:
	for ; kills < 10_000; kills++ {
		select {
		case <-done:
			break storm
		default:
		}
		q := "KILL QUERY WHERE query NOT LIKE '%system.processes%' ASYNC"
		switch rng.IntN(5) {
		case 1:
			q = "KILL QUERY WHERE query LIKE '%storm-%' AND query NOT LIKE '%system.processes%' ASYNC"
		case 2, 3, 4:
			ids, err := killer.Run("SELECT query_id FROM system.processes WHERE query LIKE '%storm-%' AND query NOT LIKE '%system.processes%' AND NOT is_cancelled", "TSV")
			if err != nil {
				t.Fatalf("list queries: %v", err)
			}
			if list := strings.Fields(ids); len(list) > 0 {
				q = "KILL QUERY WHERE query_id = '" + list[rng.IntN(len(list))] + "' ASYNC"
			}
		}
		if _, err := killer.Run(q, "TSV"); err != nil {
			t.Fatalf("kill: %v", err)
		}
		// Spreads the kills over the workers' statements; no outcome
		// depends on it.
		time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
	}
	<-done
	t.Logf("%d kills; outcomes: %v", kills, outcomes)
	if outcomes["query cancelled"]+outcomes["exec cancelled"]+outcomes["insert cancelled"]+outcomes["read-only cancelled"] == 0 {
		t.Error("no statement was killed: the storm tested nothing")
	}

	checkPool(t, st, ro)
	for i, ok := range acked {
		if !ok {
			continue
		}
		got := one(t, st, "SELECT count() FROM views_raw WHERE startsWith(event_id, {p:String})", store.Params{"p": fmt.Sprintf("ev-%d-", 7000+i)})
		if got != "40" {
			t.Errorf("acknowledged insert %d: %s rows in views_raw, want 40", i, got)
		}
	}
}

// roQuery runs an analyst query on ro: checked, then run.
func roQuery(ctx context.Context, ro *store.ReadOnly, text, format string) ([]byte, error) {
	q, err := analyst.Check(text, ro.Policy())
	if err != nil {
		return nil, err
	}
	out, _, err := ro.Query(ctx, q, format, nil)
	return out, err
}
