package store_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/api/sqlhttp"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// A server's analyst user is reached over ClickHouse's HTTP interface: the
// query checked here, the engine's EXPLAIN AST asked of the server, then
// the query. No ClickHouse server runs where this is built, so the
// upstream is the embedded store behind this project's own listener, which
// speaks the same interface (TestJSClient proves it against the official
// client); the protocol, the errors and the summary are what is tested.
func TestReadOnlyUpstream(t *testing.T) {
	st := storetest.Open(t)
	if err := st.Exec(t.Context(), "CREATE TABLE t (x UInt64) ENGINE = MergeTree ORDER BY x", nil); err != nil {
		t.Fatal(err)
	}
	if err := st.Exec(t.Context(), "INSERT INTO t SELECT number FROM numbers(5)", nil); err != nil {
		t.Fatal(err)
	}
	ro, err := store.OpenReadOnly(st, store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ro.Close() })
	tokens, err := stream.OpenTokens(t.Context(), streamtest.Open(t, 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sqlhttp.New(ro, tokens, "up-secret", 0, nil))
	t.Cleanup(srv.Close)

	up, err := store.OpenReadOnlyUpstream(strings.Replace(srv.URL, "http://", "http://analyst:up-secret@", 1), ro.Database(), store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = up.Close() })
	run := func(text, format string, params store.Params) (string, error) {
		q, err := analyst.Check(text, up.Policy())
		if err != nil {
			return "", err
		}
		out, _, err := up.Query(t.Context(), q, format, params)
		return string(out), err
	}
	ok := func(text, format, want string, params store.Params) {
		t.Helper()
		got, err := run(text, format, params)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", text, got, err, want)
		}
	}
	ok("SELECT sum(x) FROM t", "TabSeparated", "10\n", nil)
	ok("SELECT x FROM t WHERE x > {n:UInt8} ORDER BY x FORMAT CSV", "TabSeparated", "4\n", store.Params{"n": "3"})
	ok("SELECT count() AS c FROM t", "JSONEachRow", "{\"c\":5}\n", nil)
	if _, err := run("SELECT * FROM nope", "TSV", nil); err == nil || !strings.HasPrefix(err.Error(), "Code: 60.") {
		t.Errorf("unknown table: %v, want Code 60", err)
	}
	if _, err := run("SELECT file('x')", "TSV", nil); err == nil || !strings.Contains(err.Error(), "Code: 497.") {
		t.Errorf("file(): %v, want Code 497 before anything is sent", err)
	}

	bad, err := store.OpenReadOnlyUpstream(strings.Replace(srv.URL, "http://", "http://analyst:wrong@", 1), ro.Database(), store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	q, _ := analyst.Check("SELECT 1", bad.Policy())
	if _, _, err := bad.Query(t.Context(), q, "TSV", nil); err == nil || !strings.HasPrefix(err.Error(), "Code: 516.") {
		t.Errorf("wrong password: %v, want Code 516", err)
	}
	for _, u := range []string{"", "ftp://x", "http://", "clickhouse://a:b@h:9000/db"} {
		if _, err := store.OpenReadOnlyUpstream(u, "viewcount", store.Limits{}); err == nil || strings.Contains(err.Error(), "b@") {
			t.Errorf("upstream %q: %v", u, err)
		}
	}
}
