package store_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// canaryRig is a read-only connection on a migrated store, with canary
// files where an attacker would look for secrets: under the working
// directory (the engine resolves relative paths from it; the seeds name
// it $R), beside the engine's files (where the service keeps
// admin_token), and in a directory the seeds name by absolute path ($W).
type canaryRig struct {
	r       *store.ReadOnly
	secret  []byte
	rel     string   // the canary directory under the working directory
	dirs    []string // watched: no file in them may appear, change or go
	before  map[string]string
	session string
}

func newCanaryRig(tb testing.TB) *canaryRig {
	tb.Helper()
	st := storetest.Migrated(tb)
	r, err := store.OpenReadOnly(st, store.Limits{MaxExecutionTime: 3 * time.Second, MaxResultRows: 100_000, MaxMemoryUsage: 1 << 30})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = r.Close() })
	b := make([]byte, 12)
	_, _ = crand.Read(b)
	rig := &canaryRig{r: r, secret: []byte("vc-canary-" + hex.EncodeToString(b))}
	work := tb.TempDir()
	// A directory of the working directory, named for this process
	// (.gitignore keeps such leftovers out of commits): the test cannot
	// change the working directory, where the fuzzer writes what it finds.
	rel := ".canary-" + hex.EncodeToString(b[:4])
	if err := os.Mkdir(rel, 0o750); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(rel) })
	rig.rel = rel
	engineDir := storetest.Dir()
	for _, p := range []string{
		filepath.Join(rel, "data", "admin_token"), filepath.Join(work, "canary"),
		filepath.Join(work, "salts", "today"), filepath.Join(engineDir, "admin_token"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, append([]byte(nil), rig.secret...), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Cleanup(func() { _ = os.Remove(filepath.Join(engineDir, "admin_token")) })
	rig.dirs = []string{work, rel, engineDir}
	rig.before = rig.snapshot(tb)
	rig.session = rig.sessionState(tb)
	return rig
}

// snapshot is every file in the watched directories (the engine's own
// store excepted) with its size and content.
func (rig *canaryRig) snapshot(tb testing.TB) map[string]string {
	tb.Helper()
	out := map[string]string{}
	for _, dir := range rig.dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // a file the engine removed while walking
			}
			if d.IsDir() && p == filepath.Join(storetest.Dir(), "chdb") {
				return filepath.SkipDir
			}
			if d.IsDir() {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			out[p] = string(b)
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

func (rig *canaryRig) sessionState(tb testing.TB) string {
	tb.Helper()
	s, err := rig.r.SessionState(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// run checks one text: refused, or run with every property holding.
func (rig *canaryRig) run(t *testing.T, text string) {
	t.Helper()
	q, err := analyst.Check(text, rig.r.Policy())
	if err != nil {
		if !analyst.IsRefusal(err) {
			t.Fatalf("%q: Check failed without a refusal: %v", text, err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, _, err := rig.r.Query(ctx, q, "TabSeparated", store.Params{"n": "3", "s": "x"})
	if bytes.Contains(out, rig.secret) || err != nil && strings.Contains(err.Error(), string(rig.secret)) {
		t.Fatalf("%q (run as %q) read a canary", text, q.Text())
	}
	if err != nil && strings.Contains(err.Error(), "Cannot open file") {
		t.Fatalf("%q (run as %q) opened a file: %v", text, q.Text(), err)
	}
	after := rig.snapshot(t)
	for p, b := range after {
		if was, ok := rig.before[p]; !ok || was != b {
			t.Fatalf("%q (run as %q) created or changed %s", text, q.Text(), p)
		}
	}
	for p := range rig.before {
		if _, ok := after[p]; !ok {
			t.Fatalf("%q (run as %q) removed %s", text, q.Text(), p)
		}
	}
	if s := rig.sessionState(t); s != rig.session {
		t.Fatalf("%q (run as %q) changed the session: %s, was %s", text, q.Text(), s, rig.session)
	}
}

// canarySeeds are the security review's payloads and ClickHouse's syntax
// families: comments, string escapes, quoted names, \G, Unicode, nested
// subqueries, lambdas, CTEs. $W is the canary directory's absolute path.
var canarySeeds = []string{
	"SELECT trimBoth(file('$R/data/admin_token')) FORMAT TSVRaw",
	"SELECT file('$W/canary')",
	"SELECT file('/proc/self/environ')",
	"SELECT * FROM file('$W/canary', 'LineAsString')",
	"SELECT 'x' INTO OUTFILE '$W/written'",
	"SELECT 'x' INTO OUTFILE '$W/canary' APPEND",
	"SELECT 1; SELECT '#!/bin/sh' UNION ALL SELECT 'echo ran' INTO OUTFILE '$W/run.sh' TRUNCATE FORMAT TSVRaw",
	"SELECT 1; SELECT * FROM merge('system','^one$')",
	"SELECT 1; USE system",
	"SELECT 1; KILL QUERY WHERE query NOT LIKE '%system.processes%' ASYNC",
	"SELECT 1; SELECT sleep(3); SELECT sleep(3)",
	"SELECT getServerSetting('path'), metadata_path FROM system.tables",
	"SELECT name, metadata_path FROM system.tables WHERE database = currentDatabase()",
	"SELECT * FROM system.processes",
	"USE system",
	"SET readonly = 0",
	"SELECT 1 SETTINGS readonly = 0",
	"SELECT 1 /* /* nested */ file('$W/canary') */",
	"SELECT 1 -- ; SELECT file('$W/canary')\n",
	"SELECT 1 # ; SELECT file('$W/canary')\n, 2",
	"SELECT '\\'; SELECT file(''$W/canary'')'",
	"SELECT 'it''s', $$raw'$$, `a\\`b`, \"c\"\"d\"",
	"SELECT `file`('$W/canary')",
	"SELECT \"file\"('$W/canary')",
	"SELECT 1 \\G",
	"SELECT 'снег ☃', `名前` FROM (SELECT 1 AS `名前`)",
	"SELECT (SELECT (SELECT count() FROM views_raw WHERE site IN (SELECT site FROM page_rollup)))",
	"SELECT arrayMap(x -> x * 2, [1, 2, 3]), arrayFilter((x, y) -> x > y, [1, 2], [2, 1])",
	"WITH a AS (SELECT number AS n FROM numbers({n:UInt32})) SELECT sum(n) FROM a",
	"WITH (SELECT 1) AS one SELECT one, {s:String}",
	"SELECT count() FROM views_raw GROUP BY site WITH TOTALS ORDER BY 1 DESC NULLS LAST LIMIT 3",
	"SELECT arrayReduce('sum', [1, 2]), toTypeName(1), version(), currentDatabase()",
	"SELECT * FROM numbers(3) AS a JOIN numbers(3) AS b ON a.number = b.number",
	"EXPLAIN AST SELECT 1 INTO OUTFILE '$W/x'",
	"SHOW TABLES",
	"DESCRIBE views_raw",
	"SHOW CREATE TABLE views_raw",
	"EXISTS TABLE views_raw",
	"SELECT 1 FROM views_raw WHERE site IN system.users",
	// Found by this fuzzer: a query stopped mid-answer (here by
	// max_result_rows) left its rows to the next query on the connection.
	"SELECT*FROM numbers()",
	"SELECT number, throwIf(number = 70000) FROM numbers(80000)",
}

// Every query the checks accept, run with canary files present, neither
// reads a canary (its content is in no answer and no error) nor creates,
// changes or removes a file outside the engine's store, nor changes the
// session for the next query. `go test` runs the seeds; CI fuzzes it for
// a bounded time (.ci/run).
func FuzzAnalystCanaries(f *testing.F) {
	rig := newCanaryRig(f)
	paths := strings.NewReplacer("$W", rig.dirs[0], "$R", rig.rel)
	for _, s := range canarySeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		rig.run(t, paths.Replace(text))
	})
}

// The same property over generated queries: a grammar of select lists,
// tables, clauses and expressions with dangerous pieces (file functions,
// other databases, outfiles, second statements, settings) mixed in, so
// accepted queries are many and varied, not only the seeds' neighbours.
func TestAnalystCanariesGenerated(t *testing.T) {
	rig := newCanaryRig(t)
	g := &queryGen{r: rand.New(rand.NewPCG(19, 2026)), w: rig.dirs[0], rel: rig.rel}
	n := 400
	if testing.Short() {
		n = 100
	}
	accepted := 0
	for range n {
		q := g.query()
		if _, err := analyst.Check(q, rig.r.Policy()); err == nil {
			accepted++
		}
		rig.run(t, q)
	}
	t.Logf("%d of %d generated queries accepted and run", accepted, n)
	if accepted < n/6 {
		t.Errorf("only %d of %d generated queries were accepted: the generator exercises too little", accepted, n)
	}
}

// queryGen makes random queries from a small grammar.
type queryGen struct {
	r      *rand.Rand
	w, rel string
}

func (g *queryGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *queryGen) query() string {
	q := g.selectStmt(0)
	switch g.r.IntN(16) {
	case 0:
		q += " FORMAT " + g.pick("JSON", "CSV", "TSVRaw", "Native", "Template", "JSONEachRow")
	case 1:
		q += " INTO OUTFILE '" + g.w + "/out" + g.pick("", ".sql", ".sh") + "'"
	case 2:
		q += "; " + g.pick("SELECT 1", "USE system", "KILL QUERY WHERE 1", "SELECT file('"+g.w+"/canary')")
	case 3:
		q += " SETTINGS " + g.pick("max_threads = 1", "readonly = 0", "max_execution_time = 1", "output_format_json_quote_64bit_integers = 0", "allow_introspection_functions = 1")
	}
	return q
}

func (g *queryGen) selectStmt(depth int) string {
	var b strings.Builder
	if depth == 0 && g.r.IntN(5) == 0 {
		b.WriteString("WITH c AS (" + g.selectStmt(depth+1) + ") ")
	}
	b.WriteString("SELECT ")
	for i := range 1 + g.r.IntN(3) {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(g.expr(depth))
		if g.r.IntN(3) == 0 {
			b.WriteString(" AS " + g.pick("a", "`b c`", "\"d\"", "x1"))
		}
	}
	if g.r.IntN(4) != 0 {
		b.WriteString(" FROM " + g.table(depth))
		if g.r.IntN(4) == 0 {
			b.WriteString(" " + g.pick("LEFT JOIN", "INNER JOIN", "CROSS JOIN", ",") + " " + g.table(depth))
			if strings.HasSuffix(b.String(), ")") || g.r.IntN(2) == 0 {
				b.WriteString("")
			}
		}
	}
	if g.r.IntN(2) == 0 {
		b.WriteString(" WHERE " + g.expr(depth))
	}
	if g.r.IntN(4) == 0 {
		b.WriteString(" GROUP BY " + g.expr(depth))
	}
	if g.r.IntN(4) == 0 {
		b.WriteString(" ORDER BY " + g.expr(depth) + g.pick("", " DESC", " ASC NULLS FIRST"))
	}
	if g.r.IntN(3) == 0 {
		b.WriteString(" LIMIT " + g.pick("1", "10", "{n:UInt8}", "3 OFFSET 1"))
	}
	if depth < 2 && g.r.IntN(6) == 0 {
		b.WriteString(g.pick(" UNION ALL ", " EXCEPT ", " INTERSECT ") + g.selectStmt(depth+1))
	}
	return b.String()
}

func (g *queryGen) table(depth int) string {
	switch g.r.IntN(14) {
	case 0, 5, 6:
		if depth < 2 {
			return "(" + g.selectStmt(depth+1) + ")"
		}
	case 1:
		return g.pick("numbers(5)", "numbers({n:UInt8})", "zeros(2)", "values('x UInt8', 1, 2)", "generateRandom('a UInt8', 1) LIMIT 2")
	case 2:
		if g.r.IntN(2) == 0 {
			break
		}
		return g.pick("file('"+g.w+"/canary', 'LineAsString')", "url('http://127.0.0.1:1/', 'LineAsString')", "merge('system', '.*')", "remote('127.0.0.1', system.one)")
	case 3:
		return g.pick("system.one", "system.tables", "system.columns", "system.settings", "system.numbers", "information_schema.tables", "system.users", "system.processes")
	case 4:
		if g.r.IntN(2) == 0 {
			return g.pick("other.t", "`default`.t", "_temporary_and_external_tables.t")
		}
	}
	return g.pick("views_raw", "page_rollup", "dim_rollup", "page_views", "`views_raw`", "c")
}

func (g *queryGen) expr(depth int) string {
	if depth > 3 {
		return g.leaf()
	}
	switch g.r.IntN(16) {
	case 0, 9, 10:
		return g.expr(depth+1) + g.pick(" + ", " = ", " AND ", " OR ", " || ", " LIKE ", " IN ") + g.expr(depth+1)
	case 1, 11, 12:
		return g.pick("count", "sum", "toString", "length", "lower", "uniqCombined64", "any", "max", "arrayJoin", "toTypeName") + "(" + g.expr(depth+1) + ")"
	case 2:
		if g.r.IntN(2) == 0 {
			break
		}
		return g.pick("file", "sleep", "getServerSetting", "hostName", "dictGet", "joinGet", "getSetting", "currentUser", "filesystemAvailable") + "(" + g.leaf() + ")"
	case 3:
		return "(" + g.selectStmt(depth+1) + ")"
	case 4:
		return "arrayMap(x -> " + g.expr(depth+1) + ", [1, 2])"
	case 5:
		return "CASE WHEN " + g.expr(depth+1) + " THEN " + g.leaf() + " ELSE " + g.leaf() + " END"
	case 6:
		return "CAST(" + g.leaf() + " AS " + g.pick("String", "UInt8", "Nullable(String)", "Array(UInt8)") + ")"
	case 7:
		return g.expr(depth+1) + " /* " + g.pick("*/ file('x') /*", "; SELECT 1", "/* */") + " */"
	case 8:
		return g.leaf() + " IN " + g.pick("(1, 2)", "(SELECT 1)", "views_raw", "(SELECT site FROM page_rollup)", "system.users", "other.t")
	}
	return g.leaf()
}

func (g *queryGen) leaf() string {
	return g.pick("1", "'a'", "'it''s'", "'\\''", "$$x$$", "NULL", "site", "page", "number", "views", "{s:String}", "{n:UInt8}",
		"'"+g.w+"/canary'", "'"+g.rel+"/data/admin_token'", "`weird name`", "'☃'", "-1", "0x10", "1e3", "inf", "*")
}
