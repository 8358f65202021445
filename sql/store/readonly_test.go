package store_test

import (
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Analyst queries run only once cleared (analyst.Check, then the engine's
// EXPLAIN AST agreeing), and the read-only connection refuses every
// write, settings change and outside source by the engine's own checks
// too.
func TestReadOnlyRefuses(t *testing.T) {
	st := storetest.Open(t)
	other := storetest.Open(t) // another database on the same engine
	for _, s := range []store.Store{st, other} {
		if err := s.Exec(t.Context(), "CREATE TABLE t (x UInt64) ENGINE = MergeTree ORDER BY x", nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Exec(t.Context(), "INSERT INTO t SELECT number + 1 FROM numbers(2)", nil); err != nil {
			t.Fatal(err)
		}
	}
	otherDB := strings.TrimSpace(scalar(t, other, "SELECT currentDatabase()"))
	r, err := store.OpenReadOnly(st, store.Limits{MaxResultRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })

	run := func(q, format string, params store.Params) ([]byte, error) {
		cq, err := analyst.Check(q, r.Policy())
		if err != nil {
			return nil, err
		}
		out, _, err := r.Query(t.Context(), cq, format, params)
		return out, err
	}
	ok := func(q, format, want string) {
		t.Helper()
		out, err := run(q, format, store.Params{"n": "2"})
		if err != nil || string(out) != want {
			t.Errorf("%s: got %q, %v; want %q", q, out, err, want)
		}
	}
	ok("SELECT sum(x) FROM t", "TabSeparated", "3\n")
	ok("SELECT x FROM t WHERE x = {n:UInt8}", "CSV", "2\n")
	ok("SELECT count() FROM numbers(10)", "TSV", "10\n")
	ok("SELECT number FROM numbers(2) FORMAT JSONEachRow", "TSV", "{\"number\":0}\n{\"number\":1}\n")
	ok("SELECT value FROM system.settings WHERE name = 'readonly'", "TSV", "1\n")

	fail := func(q, wantCode string) {
		t.Helper()
		_, err := run(q, "TSV", nil)
		if err == nil || !strings.Contains(err.Error(), "Code: "+wantCode+".") {
			t.Errorf("%s: got %v, want Code %s", q, err, wantCode)
		}
	}
	fail("SELECT x FROM t SETTINGS readonly = 0", "164")
	fail("SELECT x FROM t SETTINGS max_result_rows = 0", "164")
	fail("SET readonly = 0", "164")
	fail("INSERT INTO t VALUES (3)", "164")
	fail("ALTER TABLE t DELETE WHERE 1", "164")
	fail("DROP TABLE t", "164")
	fail("CREATE TABLE u (x UInt8) ENGINE = Memory", "164")
	fail("SYSTEM FLUSH LOGS", "164")
	fail("SELECT * FROM file('/etc/passwd', 'LineAsString')", "497")
	fail("SELECT * FROM url('http://127.0.0.1:1/x', 'LineAsString')", "497")
	fail("SELECT * FROM remote('127.0.0.1', system.one)", "497")
	fail("SELECT * FROM s3('http://127.0.0.1:1/bucket/key', 'LineAsString')", "497")
	fail("SYSTEM STOP MERGES", "164") // readonly=1 alone lets this through
	fail("KILL QUERY WHERE 1", "164")
	fail("USE system", "164")
	fail("SELECT sum(x) FROM "+otherDB+".t", "497")
	fail("SELECT 1 FROM t WHERE x IN (SELECT x FROM "+otherDB+".t)", "497")
	fail("SELECT * FROM merge('"+otherDB+"', '.*')", "497")
	fail("SELECT number FROM numbers(2000)", "396") // max_result_rows
	fail("SELECT sum(x) FROM "+otherDB+".t FORMAT Parquet", "497")
	fail("SELECT sum(x) FROM "+otherDB+".t FORMAT JSONEachRow;", "497")
	fail("SELECT sum(x) FROM t SETTINGS max_threads = 1 FORMAT JSON", "164") // a change, which readonly=1 refuses
	fail("INSERT INTO t FORMAT JSONEachRow\n{\"x\":3}", "164")
	fail("SELECT file('/etc/passwd')", "497")
	fail("SELECT 1; SELECT * FROM merge('system', '^one$')", "62")
	fail("SELECT 1 INTO OUTFILE '/tmp/x'", "164")
	ok("SHOW TABLES", "TSV", "t\n")
	ok("DESCRIBE t", "TSV", "x\tUInt64\t\t\t\t\t\n")

	// The engine alone, without the statement and table checks, refuses
	// every write, settings change and outside source.
	for _, q := range []string{
		"INSERT INTO t VALUES (3)", "ALTER TABLE t DELETE WHERE 1", "DROP TABLE t",
		"CREATE TABLE u (x UInt8) ENGINE = Memory", "SYSTEM FLUSH LOGS",
		"SELECT x FROM t SETTINGS readonly = 0", "SET max_execution_time = 0",
		"SELECT * FROM file('/etc/passwd', 'LineAsString')", "SELECT * FROM url('http://127.0.0.1:1/x', 'LineAsString')",
		"SELECT * FROM remote('127.0.0.1', system.one)", "SELECT * FROM s3('http://127.0.0.1:1/bucket/key', 'LineAsString')",
	} {
		if err := r.EngineOnly(t.Context(), q); err == nil || !strings.Contains(err.Error(), "Code: 164.") {
			t.Errorf("engine alone, %s: %v, want Code 164", q, err)
		}
	}
	if got := scalar(t, st, "SELECT count() FROM t"); got != "2" {
		t.Errorf("rows after the refused writes: %s, want 2", got)
	}
}

func scalar(t *testing.T, s store.Store, q string) string {
	t.Helper()
	res, err := s.Query(t.Context(), q, nil)
	if err != nil || len(res.TextRows()) != 1 {
		t.Fatalf("%s: %v %v", q, res, err)
	}
	return res.TextRows()[0][0]
}
