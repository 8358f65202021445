package analyst

import (
	"strings"
	"testing"
	"time"
)

var testPolicy = Policy{Database: "viewcount", Limits: Limits{MaxExecutionTime: 30 * time.Second, MaxResultRows: 1_000_000, MaxMemoryUsage: 2 << 30}}

// Check prints what it accepts in one canonical form: comments gone,
// names and strings requoted, tables of the store qualified, FORMAT and
// the limit settings taken out.
func TestCheckAccepts(t *testing.T) {
	f := func(in, want, wantFormat string) {
		t.Helper()
		q, err := Check(in, testPolicy)
		if err != nil {
			t.Errorf("%s: refused: %v", in, err)
			return
		}
		if q.Text() != want || q.Format != wantFormat {
			t.Errorf("%s:\n got %s [%s]\nwant %s [%s]", in, q.Text(), q.Format, want, wantFormat)
		}
		// The printed text is a fixed point: checked again, it prints the same.
		again, err := Check(q.Text(), testPolicy)
		if err != nil || again.Text() != q.Text() {
			t.Errorf("%s: printed text does not check to itself: %q, %v", in, again.Text(), err)
		}
	}
	f("SELECT 1", "SELECT 1", "")
	f("select count() from views_raw where site = {site:String} format JSON;", "SELECT count() FROM viewcount.views_raw WHERE site = {site:String}", "JSON")
	f("SELECT 1 FORMAT json", "SELECT 1", "JSON")
	f("SELECT page, sum(views) FROM page_rollup GROUP BY page ORDER BY 2 DESC LIMIT 10", "SELECT page, sum(views) FROM viewcount.page_rollup GROUP BY page ORDER BY 2 DESC LIMIT 10", "")
	// Comments of every kind, nested ones included, are dropped.
	f("SELECT /* a /* nested */ comment */ 1 -- line\n + 2 # hash\n #!shebang\n", "SELECT 1 + 2", "")
	// Names: quoted ones are written in backquotes, escaped.
	f("SELECT `a\\`b`, \"c\"\"d\", `e``f` FROM `views_raw`", "SELECT `a\\`b`, `c\"d`, `e\\`f` FROM viewcount.`views_raw`", "")
	f("SELECT `é` AS `名前`", "SELECT `é` AS `名前`", "")
	// Strings: one quoting, escapes kept as the bytes they mean.
	f(`SELECT 'it''s', 'it\'s', 'a\\b', 'tab\there', $$raw'\$$, $x$dollar$x$`, `SELECT 'it\'s', 'it\'s', 'a\\b', 'tab\x09here', 'raw\'\\', 'dollar'`, "")
	f("SELECT 'snow ☃'", "SELECT 'snow ☃'", "")
	f("SELECT '"+strings.Repeat("(", 1000)+"'", "SELECT '"+strings.Repeat("(", 1000)+"'", "") // brackets in a string nest nothing
	// Tables of the store are written qualified; WITH tables are not.
	f("WITH a AS (SELECT 1 AS x) SELECT x FROM a", "WITH a AS (SELECT 1 AS x) SELECT x FROM a", "")
	f("WITH a AS (SELECT 1 AS x) SELECT * FROM a, views_raw", "WITH a AS (SELECT 1 AS x) SELECT * FROM a, viewcount.views_raw", "")
	f("WITH 1 + 1 AS two SELECT two", "WITH 1 + 1 AS two SELECT two", "")
	f("SELECT * FROM viewcount.views_raw AS v INNER JOIN (SELECT 1 AS k) s ON v.seq = s.k", "SELECT * FROM viewcount.views_raw AS v INNER JOIN (SELECT 1 AS k) AS s ON v.seq = s.k", "")
	f("SELECT name FROM system.tables WHERE database = currentDatabase()", "SELECT name FROM system.tables WHERE database = currentDatabase()", "")
	f("SELECT * FROM information_schema.columns", "SELECT * FROM information_schema.columns", "")
	f("SELECT number AS n FROM numbers({n:UInt32})", "SELECT number AS n FROM numbers({n:UInt32})", "")
	// Expressions keep their tokens in order.
	f("SELECT -1, - -1, 1 - -1, NOT NOT x, -x.1, a[1], t.1, (1, 'a'), (1,), [1, 2], 0. .0, x.1.2", "SELECT -1, - -1, 1 - -1, NOT NOT x, -x . 1, a[1], t . 1, (1, 'a'), (1,), [1, 2], 0. . 0, x . 1.2", "")
	f("SELECT arrayMap(x -> x + 1, arr), arrayMap((a, b) -> a * b, x, y)", "SELECT arrayMap(x -> x + 1, arr), arrayMap((a, b) -> a * b, x, y)", "")
	f("SELECT CAST(x AS Nullable(DateTime64(3, 'UTC'))), x::Array(Tuple(a UInt8, b String)), CAST(x, 'UInt8'), CAST(e AS Enum8('a' = 1, 'b' = -2))",
		"SELECT CAST(x AS Nullable(DateTime64(3, 'UTC'))), x::Array(Tuple(a UInt8, b String)), CAST(x, 'UInt8'), CAST(e AS Enum8('a' = 1, 'b' = -2))", "")
	f("SELECT CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END, CASE x WHEN 1 THEN 'one' END", "SELECT CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END, CASE x WHEN 1 THEN 'one' END", "")
	f("SELECT x BETWEEN 1 AND 2, x NOT BETWEEN 1 AND 2, x IS NULL, x IS NOT NULL, x LIKE 'a%', x NOT ILIKE 'b', x REGEXP '^a', c ? 1 : 2, a <=> b, a IS DISTINCT FROM b",
		"SELECT x BETWEEN 1 AND 2, x NOT BETWEEN 1 AND 2, x IS NULL, x IS NOT NULL, x LIKE 'a%', x NOT ILIKE 'b', x REGEXP '^a', c ? 1 : 2, a <=> b, a IS DISTINCT FROM b", "")
	f("SELECT x IN (1, 2), x NOT IN (SELECT 1), x GLOBAL IN t, x GLOBAL NOT IN viewcount.t", "SELECT x IN (1, 2), x NOT IN (SELECT 1), x GLOBAL IN t, x GLOBAL NOT IN viewcount.t", "")
	f("SELECT INTERVAL 1 DAY, INTERVAL '1 day', DATE '2026-01-01', TIMESTAMP '2026-01-01 00:00:00', EXTRACT(DAY FROM d), substring(s FROM 1 FOR 2), position('a' IN s), trim(BOTH ' ' FROM s), trim(LEADING 'x' FROM s)",
		"SELECT INTERVAL 1 DAY, INTERVAL '1 day', DATE '2026-01-01', TIMESTAMP '2026-01-01 00:00:00', EXTRACT(DAY FROM d), substring(s FROM 1 FOR 2), position('a' IN s), trim(BOTH ' ' FROM s), trim(LEADING 'x' FROM s)", "")
	f("SELECT quantileExact(0.5)(x), uniqCombined64Merge(12)(u), countIf(v = 'valid'), sumIfOrNull(x, c), count(DISTINCT x), COUNT(*)",
		"SELECT quantileExact(0.5)(x), uniqCombined64Merge(12)(u), countIf(v = 'valid'), sumIfOrNull(x, c), count(DISTINCT x), COUNT(*)", "")
	f("SELECT row_number() OVER w, sum(x) OVER (PARTITION BY y ORDER BY z DESC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t WINDOW w AS (ORDER BY z)",
		"SELECT row_number() OVER w, sum(x) OVER (PARTITION BY y ORDER BY z DESC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM viewcount.t WINDOW w AS (ORDER BY z)", "")
	f("SELECT count() FILTER (WHERE x > 1), any(x) RESPECT NULLS FROM t", "SELECT count() FILTER (WHERE x > 1), any(x) RESPECT NULLS FROM viewcount.t", "")
	f("SELECT * EXCEPT (a, b), t.*, COLUMNS('^p') EXCEPT ('page') FROM t", "SELECT * EXCEPT (a, b), t.*, COLUMNS('^p') EXCEPT ('page') FROM viewcount.t", "")
	f("SELECT DISTINCT ON (a) a, b FROM t PREWHERE x WHERE y GROUP BY a WITH TOTALS HAVING count() > 1 QUALIFY 1 ORDER BY a DESC NULLS LAST, b COLLATE 'en' WITH FILL STEP 1 LIMIT 10 OFFSET 5",
		"SELECT DISTINCT ON (a) a, b FROM viewcount.t PREWHERE x WHERE y GROUP BY a WITH TOTALS HAVING count() > 1 QUALIFY 1 ORDER BY a DESC NULLS LAST, b COLLATE 'en' WITH FILL STEP 1 LIMIT 10 OFFSET 5", "")
	f("SELECT a FROM t GROUP BY ALL ORDER BY ALL", "SELECT a FROM viewcount.t GROUP BY ALL ORDER BY ALL", "")
	f("SELECT a FROM t GROUP BY ROLLUP(a, b)", "SELECT a FROM viewcount.t GROUP BY ROLLUP (a, b)", "")
	f("SELECT a FROM t GROUP BY GROUPING SETS ((a), (b))", "SELECT a FROM viewcount.t GROUP BY GROUPING SETS ((a), (b))", "")
	f("SELECT * FROM t FINAL SAMPLE 1/10 OFFSET 1/2", "SELECT * FROM viewcount.t FINAL SAMPLE 1 / 10 OFFSET 1 / 2", "")
	f("SELECT a FROM t ARRAY JOIN arr AS e LEFT ARRAY JOIN b ANY LEFT JOIN u USING (a) CROSS JOIN v", "SELECT a FROM viewcount.t ARRAY JOIN arr AS e LEFT ARRAY JOIN b ANY LEFT JOIN viewcount.u USING (a) CROSS JOIN viewcount.v", "")
	f("SELECT 1 UNION ALL SELECT 2 EXCEPT SELECT 3 INTERSECT DISTINCT (SELECT 4)", "SELECT 1 UNION ALL SELECT 2 EXCEPT SELECT 3 INTERSECT DISTINCT (SELECT 4)", "")
	f("(SELECT 1) UNION ALL (SELECT 2) FORMAT CSV", "(SELECT 1) UNION ALL (SELECT 2)", "CSV")
	f("SELECT * FROM t ORDER BY a LIMIT 10 WITH TIES", "SELECT * FROM viewcount.t ORDER BY a LIMIT 10 WITH TIES", "")
	f("SELECT * FROM t LIMIT 5, 10", "SELECT * FROM viewcount.t LIMIT 5, 10", "")
	f("SELECT * FROM t ORDER BY a OFFSET 5 ROWS FETCH NEXT 3 ROWS ONLY", "SELECT * FROM viewcount.t ORDER BY a OFFSET 5 ROWS FETCH NEXT 3 ROWS ONLY", "")
	f("SELECT 1 x, 2 `y`, 3 AS z", "SELECT 1 AS x, 2 AS `y`, 3 AS z", "")
	f("SELECT 0x1F, 0b101, 1e3, 1.5e-3, .5, inf, nan, NULL, true, False", "SELECT 0x1F, 0b101, 1e3, 1.5e-3, .5, inf, nan, NULL, TRUE, FALSE", "")
	f("SELECT EXISTS (SELECT 1), exists(SELECT 1)", "SELECT EXISTS(SELECT 1), exists(SELECT 1)", "")
	f("SELECT arrayReduce('sum', [1, 2]), initializeAggregation('uniqState', 1)", "SELECT arrayReduce('sum', [1, 2]), initializeAggregation('uniqState', 1)", "")
	// Settings: the limits are taken out, others written as given.
	f("SELECT 1 SETTINGS max_execution_time = 5, output_format_json_quote_64bit_integers = 0", "SELECT 1 SETTINGS output_format_json_quote_64bit_integers = 0", "")
	f("SELECT 1 FORMAT JSON SETTINGS max_result_rows = 10", "SELECT 1", "JSON")
	// Other statements.
	f("SHOW TABLES", "SHOW TABLES", "")
	f("show tables from viewcount like 'v%'", "SHOW TABLES FROM viewcount LIKE 'v%'", "")
	f("SHOW DATABASES", "SHOW DATABASES", "")
	f("SHOW CREATE TABLE views_raw", "SHOW CREATE TABLE viewcount.views_raw", "")
	f("DESC views_raw", "DESCRIBE TABLE viewcount.views_raw", "")
	f("DESCRIBE TABLE system.columns", "DESCRIBE TABLE system.columns", "")
	f("EXISTS TABLE views_raw", "EXISTS TABLE viewcount.views_raw", "")
	f("EXPLAIN SELECT 1", "EXPLAIN PLAN SELECT 1", "")
	f("EXPLAIN AST SELECT 1", "EXPLAIN AST SELECT 1", "")
	f("EXPLAIN QUERY TREE SELECT 1", "EXPLAIN QUERY TREE SELECT 1", "")

	q, err := Check("SELECT 1 SETTINGS max_execution_time = 2.5", testPolicy)
	if err != nil || q.MaxExecutionTime != 2500*time.Millisecond {
		t.Errorf("max_execution_time 2.5: %v, %v", q.MaxExecutionTime, err)
	}
}

// Check refuses, with the engine's code for the condition, everything an
// analyst may not run: each payload of the security review among them.
func TestCheckRefuses(t *testing.T) {
	f := func(in string, code int, msg string) {
		t.Helper()
		_, err := Check(in, testPolicy)
		e, ok := err.(*Error)
		if !ok || e.Code != code || !strings.Contains(e.Error(), msg) {
			t.Errorf("%q: got %v, want code %d containing %q", in, err, code, msg)
		}
	}
	// Finding 1: files read through the scalar file().
	f("SELECT trimBoth(file('data/admin_token')) FORMAT TSVRaw", 497, `function "file"`)
	f("SELECT file('/proc/self/environ')", 497, `function "file"`)
	f("SELECT FILE('x')", 497, `function "FILE"`)
	f("SELECT `file`('x')", 497, "not allowed")
	f("SELECT * FROM file('/etc/passwd', 'LineAsString')", 497, `table function "file"`)
	// Finding 2: writes through INTO OUTFILE, alone or after a statement.
	f("SELECT 'x' INTO OUTFILE '/some/path'", 164, "INTO OUTFILE")
	f("SELECT 'x' INTO OUTFILE '/some/path' APPEND", 164, "INTO OUTFILE")
	f("SELECT 1; SELECT '#!/bin/sh' UNION ALL SELECT 'echo ran' INTO OUTFILE '/some/path' TRUNCATE FORMAT TSVRaw", 62, "one statement")
	f("SELECT 1 FORMAT TSV INTO OUTFILE 'x'", 164, "INTO OUTFILE")
	// Finding 3: everything after the first ';'.
	f("SELECT 1; SELECT * FROM merge('system','^one$')", 62, "one statement")
	f("SELECT 1; USE system", 62, "one statement")
	f("SELECT 1; KILL QUERY WHERE query NOT LIKE '%system.processes%' ASYNC", 62, "one statement")
	f("SELECT 1; SELECT sleep(3); SELECT sleep(3)", 62, "one statement")
	f("SELECT 1;;", 62, "")
	f("SELECT sleep(3)", 497, `function "sleep"`)
	f("SELECT sleepEachRow(1) FROM numbers(10)", 497, "sleepEachRow")
	// Statements that are not reads.
	for _, s := range []string{"USE system", "SET readonly = 0", "KILL QUERY WHERE 1", "SYSTEM STOP MERGES", "INSERT INTO t VALUES (1)",
		"ALTER TABLE t DELETE WHERE 1", "DROP TABLE t", "CREATE TABLE u (x UInt8) ENGINE = Memory", "TRUNCATE TABLE t",
		"OPTIMIZE TABLE t", "GRANT SELECT ON *.* TO x", "ATTACH TABLE t", "DETACH TABLE t", "  /* c */ kill query where 1"} {
		f(s, 164, "cannot run here")
	}
	// Finding 5 and the rest: server state, other databases, dictionaries.
	for _, fn := range []string{"getServerSetting('path')", "getSetting('readonly')", "hostName()", "FQDN()", "currentUser()", "dictGet('d', 'x', 1)",
		"joinGet('t', 'x', 1)", "hasColumnInTable('system', 'users', 'name')", "filesystemAvailable()", "uptime()", "serverUUID()",
		"getMacro('x')", "tcpPort()", "catboostEvaluate('m', 1)", "addressToSymbol(1)", "showCertificate()", "generateSerialID('x')",
		"__getScalar('x')", "timeSeriesStoreTags(1, [('a', 'b')], 'x')", "fileIf(x, 1)", "dictGetState(x)", "aiGenerate('x')"} {
		f("SELECT "+fn, 497, "not allowed")
	}
	f("SELECT arrayReduce('file', [1])", 497, "aggregate function")
	f("SELECT arrayReduce(x, [1])", 497, "as a string")
	f("SELECT * FROM merge('system', '^one$')", 497, "table function")
	f("SELECT * FROM url('http://127.0.0.1/', 'LineAsString')", 497, "table function")
	f("SELECT * FROM remote('127.0.0.1', system.one)", 497, "table function")
	f("SELECT * FROM executable('x', 'TSV', 'a String')", 497, "table function")
	f("SELECT * FROM dictionary('d')", 497, "table function")
	f("SELECT * FROM view(SELECT 1)", 497, "table function")
	f("SELECT * FROM other.t", 497, `database "other"`)
	f("SELECT * FROM `other`.t", 497, `database "other"`)
	f("SELECT * FROM system.users", 497, "system")
	f("SELECT * FROM system.processes", 497, "system")
	f("SELECT query FROM system.query_log", 497, "system")
	f("SELECT * FROM system.disks", 497, "system")
	f("SELECT * FROM information_schema.secret", 497, "information_schema")
	f("SELECT 1 FROM t WHERE x IN other.t", 497, `database "other"`)
	f("SELECT 1 FROM t WHERE x IN (SELECT x FROM other.t)", 497, `database "other"`)
	f("SELECT (SELECT file('x'))", 497, "file")
	f("WITH a AS (SELECT * FROM system.users) SELECT * FROM a", 497, "system")
	f("SELECT * FROM t JOIN system.grants USING (x)", 497, "system")
	f("DESCRIBE other.t", 497, "other")
	f("SHOW CREATE TABLE system.users", 497, "system")
	f("SHOW TABLES FROM system", 497, "SHOW TABLES")
	f("EXPLAIN SELECT file('x')", 497, "file")
	f("EXPLAIN PIPELINE SELECT * FROM other.t", 497, "other")
	// Settings and formats by allow-list.
	f("SELECT 1 SETTINGS readonly = 0", 164, "readonly")
	f("SELECT 1 SETTINGS allow_introspection_functions = 1", 164, "allow_introspection_functions")
	f("SELECT 1 SETTINGS max_execution_time = 0", 164, "at most")
	f("SELECT 1 SETTINGS max_execution_time = 100", 164, "at most")
	f("SELECT 1 SETTINGS max_result_rows = 0", 164, "at most")
	f("SELECT 1 SETTINGS output_format_pretty_color = (SELECT 1)", 36, "value")
	f("SELECT 1 FORMAT Template", 73, "Template")
	f("SELECT 1 FORMAT Protobuf", 73, "Protobuf")
	f("SELECT 1 FORMAT NoSuchFormat", 73, "")
	// Syntax the checks do not take, refused rather than guessed.
	f("SELECT 1 \\G", 62, "")
	f("SELECT ?", 62, "placeholder")
	f("SELECT @x", 62, "")
	f("SELECT a$b", 62, "'$'")
	f("SELECT 1abc", 62, "number")
	f("SELECT * APPLY(toString) FROM t", 62, "APPLY")
	f("SELECT 'unterminated", 62, "unterminated")
	f("SELECT /* unterminated", 62, "unterminated")
	f("SELECT ＳＥＬＥＣＴ", 62, "ASCII")
	f("SELECT\u00a01", 62, "ASCII")
	f("", 211, "Empty")
	f("  -- only a comment\n", 211, "Empty")
	f(strings.Repeat("(", 300)+"1"+strings.Repeat(")", 300), 167, "nests")
	f("SELECT "+strings.Repeat("- ", 300)+"1", 167, "nests")
	f("SELECT "+strings.Repeat("-", 300)+"1", 62, "") // a comment to the end
	f("SELECT "+strings.Repeat("NOT ", 300)+"1", 167, "nests")
	f(strings.Repeat("x", MaxQueryBytes+1), 229, "at most")
}

// A query deep enough to exhaust a recursive parser's stack is refused
// before it is parsed, in any of the shapes that recurse.
func TestCheckBoundsRecursion(t *testing.T) {
	for _, q := range []string{
		"SELECT " + strings.Repeat("[", 100000),
		"SELECT " + strings.Repeat("(", 100000),
		"SELECT " + strings.Repeat("- ", 100000) + "1",
		"SELECT " + strings.Repeat("NOT ", 60000) + "1",
		"SELECT " + strings.Repeat("f(", 50000),
		"SELECT 1" + strings.Repeat(" + 1", 60000),
		"SELECT " + strings.Repeat("CASE WHEN 1 THEN ", 20000),
		"SELECT " + strings.Repeat("x -> ", 50000) + "1",
		"SELECT " + strings.Repeat("(SELECT ", 40000),
	} {
		if _, err := Check(q, testPolicy); err == nil && len(q) <= MaxQueryBytes {
			t.Errorf("%.40s…: accepted", q)
		}
	}
}
