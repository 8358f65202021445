-- Queries the checks accept, one per block between lines of '-- ===='.
-- The engine must read each printed one as the checks do (TestEngineAgrees).
-- ====
SELECT 1
-- ====
select count() from views_raw where site = {site:String} format JSON;
-- ====
SELECT 1 FORMAT json
-- ====
SELECT page, sum(views) FROM page_rollup GROUP BY page ORDER BY 2 DESC LIMIT 10
-- ====
SELECT /* a /* nested */ comment */ 1 -- line
 + 2 # hash
 #!shebang

-- ====
SELECT `a\`b`, "c""d", `e``f` FROM `views_raw`
-- ====
SELECT `é` AS `名前`
-- ====
SELECT 'it''s', 'it\'s', 'a\\b', 'tab\there', $$raw'\$$, $x$dollar$x$
-- ====
SELECT 'snow ☃'
-- ====
WITH a AS (SELECT 1 AS x) SELECT x FROM a
-- ====
WITH a AS (SELECT 1 AS x) SELECT * FROM a, views_raw
-- ====
WITH 1 + 1 AS two SELECT two
-- ====
SELECT * FROM viewcount.views_raw AS v INNER JOIN (SELECT 1 AS k) s ON v.seq = s.k
-- ====
SELECT name FROM system.tables WHERE database = currentDatabase()
-- ====
SELECT * FROM information_schema.columns
-- ====
SELECT number AS n FROM numbers({n:UInt32})
-- ====
SELECT -1, - -1, 1 - -1, NOT NOT x, -x.1, a[1], t.1, (1, 'a'), (1,), [1, 2]
-- ====
SELECT arrayMap(x -> x + 1, arr), arrayMap((a, b) -> a * b, x, y)
-- ====
SELECT CAST(x AS Nullable(DateTime64(3, 'UTC'))), x::Array(Tuple(a UInt8, b String)), CAST(x, 'UInt8'), CAST(e AS Enum8('a' = 1, 'b' = -2))
-- ====
SELECT CASE WHEN a THEN 1 WHEN b THEN 2 ELSE 3 END, CASE x WHEN 1 THEN 'one' END
-- ====
SELECT x BETWEEN 1 AND 2, x NOT BETWEEN 1 AND 2, x IS NULL, x IS NOT NULL, x LIKE 'a%', x NOT ILIKE 'b', x REGEXP '^a', c ? 1 : 2, a <=> b, a IS DISTINCT FROM b
-- ====
SELECT x IN (1, 2), x NOT IN (SELECT 1), x GLOBAL IN t, x GLOBAL NOT IN viewcount.t
-- ====
SELECT INTERVAL 1 DAY, INTERVAL '1 day', DATE '2026-01-01', TIMESTAMP '2026-01-01 00:00:00', EXTRACT(DAY FROM d), substring(s FROM 1 FOR 2), position('a' IN s), trim(BOTH ' ' FROM s), trim(LEADING 'x' FROM s)
-- ====
SELECT quantileExact(0.5)(x), uniqCombined64Merge(12)(u), countIf(v = 'valid'), sumIfOrNull(x, c), count(DISTINCT x), COUNT(*)
-- ====
SELECT row_number() OVER w, sum(x) OVER (PARTITION BY y ORDER BY z DESC ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t WINDOW w AS (ORDER BY z)
-- ====
SELECT count() FILTER (WHERE x > 1), any(x) RESPECT NULLS FROM t
-- ====
SELECT * EXCEPT (a, b), t.*, COLUMNS('^p') EXCEPT ('page') FROM t
-- ====
SELECT DISTINCT ON (a) a, b FROM t PREWHERE x WHERE y GROUP BY a WITH TOTALS HAVING count() > 1 QUALIFY 1 ORDER BY a DESC NULLS LAST, b COLLATE 'en' WITH FILL STEP 1 LIMIT 10 OFFSET 5
-- ====
SELECT a FROM t GROUP BY ALL ORDER BY ALL
-- ====
SELECT a FROM t GROUP BY ROLLUP(a, b)
-- ====
SELECT a FROM t GROUP BY GROUPING SETS ((a), (b))
-- ====
SELECT * FROM t FINAL SAMPLE 1/10 OFFSET 1/2
-- ====
SELECT a FROM t ARRAY JOIN arr AS e LEFT ARRAY JOIN b ANY LEFT JOIN u USING (a) CROSS JOIN v
-- ====
SELECT 1 UNION ALL SELECT 2 EXCEPT SELECT 3 INTERSECT DISTINCT (SELECT 4)
-- ====
(SELECT 1) UNION ALL (SELECT 2) FORMAT CSV
-- ====
SELECT * FROM t ORDER BY a LIMIT 10 WITH TIES
-- ====
SELECT * FROM t LIMIT 5, 10
-- ====
SELECT * FROM t ORDER BY a OFFSET 5 ROWS FETCH NEXT 3 ROWS ONLY
-- ====
SELECT 1 x, 2 `y`, 3 AS z
-- ====
SELECT 0x1F, 0b101, 1e3, 1.5e-3, .5, inf, nan, NULL, true, False
-- ====
SELECT EXISTS (SELECT 1), exists(SELECT 1)
-- ====
SELECT arrayReduce('sum', [1, 2]), initializeAggregation('uniqState', 1)
-- ====
SELECT 1 SETTINGS max_execution_time = 5, output_format_json_quote_64bit_integers = 0
-- ====
SELECT 1 FORMAT JSON SETTINGS max_result_rows = 10
-- ====
SHOW TABLES
-- ====
show tables from viewcount like 'v%'
-- ====
SHOW DATABASES
-- ====
SHOW CREATE TABLE views_raw
-- ====
DESC views_raw
-- ====
DESCRIBE TABLE system.columns
-- ====
EXISTS TABLE views_raw
-- ====
EXPLAIN SELECT 1
-- ====
EXPLAIN AST SELECT 1
-- ====
EXPLAIN QUERY TREE SELECT 1
-- ====
SELECT toStartOfInterval(toDateTime(time), INTERVAL 60 second) AS t, verdict, count() AS events FROM views_raw WHERE site = 'a' AND verdict != 'valid' AND verdict IN ('bot_ua','rate') AND time >= toDateTime(1700000000) AND time <= toDateTime(1700003600) GROUP BY t, verdict ORDER BY t, verdict
-- ====
SELECT page, countIf(verdict != 'valid') AS rejected, count() AS events, round(rejected / events, 3) AS rejected_share, topKIf(1)(verdict, verdict != 'valid')[1] AS top_reason FROM views_raw WHERE site = 'a' GROUP BY page HAVING rejected > 0 ORDER BY rejected DESC, page LIMIT 20
-- ====
SELECT displayName(), version(), revision(), timezone()
-- ====
SELECT name, value FROM system.settings WHERE name IN {names:Array(String)}
-- ====
SELECT name FROM system.databases
-- ====
SELECT name, type FROM system.columns WHERE database = 'viewcount' AND table = 'views_raw'
-- ====
SELECT x FROM t WHERE a = 1 OR b = 2 AND NOT c = 3
-- ====
SELECT toTypeName(1), materialize(1), ignore(1), throwIf(0), if(1, 2, 3), multiIf(1, 2, 3), coalesce(NULL, 1), isNotDistinctFrom(1, 1)
-- ====
SELECT uniqCombined64Merge(uniques) FROM page_rollup GROUP BY page
-- ====
SELECT a.b.c, t.1.2, m['k'][1], (x).1 FROM t
-- ====
SELECT tuple(1, 2).1, [1, 2][1], map('a', 1)['a']
-- ====
SELECT count() FROM views_raw AS v LEFT JOIN page_rollup AS p ON v.page = p.page AND v.site = p.site
-- ====
SELECT * FROM values('a UInt8, b String', (1, 'x'), (2, 'y'))
-- ====
SELECT * FROM generateRandom('a UInt8', 1) LIMIT 3
-- ====
SELECT * FROM zeros(3)
-- ====
SELECT number FROM system.numbers LIMIT 3
-- ====
SELECT dummy FROM system.one
-- ====
SELECT grouping(a) FROM t GROUP BY ROLLUP(a)
-- ====
SELECT 1 WHERE NOT EXISTS (SELECT 1)
-- ====
SELECT -2147483648, 1 + -1, 2 * -3
-- ====
SELECT x -> x, (x, y) -> x
-- ====
SELECT arrayFilter(x -> x > 1, [1, 2, 3]) AS a, arraySort((x, y) -> y, [1, 2], [2, 1])
-- ====
SELECT a, b FROM t ORDER BY a LIMIT 1 BY a LIMIT 10
