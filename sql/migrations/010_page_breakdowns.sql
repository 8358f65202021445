-- Breakdowns of one page ("where did this video's viewers come
-- from?"): dim_rollup gains, per page, valid views and a sketch of visitor
-- ids per combination of every dimension 008 breaks the site down by:
--   page_dims  page = page  value = source, referrer, utm_source,   hour, day
--                                   utm_medium, utm_campaign, browser,
--                                   os, device, country, screen
--                                   joined with \x1f, in that order
-- The stats API answers `breakdown?by=<dim>&page=/x` from them by taking
-- the dim's field and grouping (queries/stats_breakdown_page.sql). The
-- separator cannot occur in a value: ingest refuses control characters in
-- pages and drops UTM values holding one, hosts cannot hold one, and the
-- other dimensions come from fixed sets.
--
-- Why one row per combination, not a row per dimension as for the whole
-- site: with a page in the key a combination is nearly one view on
-- many-page traffic, so the insert path pays per row written. A row per
-- dimension and grain is 20 rows per view and cost 3.3 times main's CPU
-- per row in BenchmarkInsertBatch/spread (100k pages); a combination per
-- grain is 2 and costs +50 % (hot page: +13 %; medians of 3 alternating
-- runs). Hour rows only (+35 %) would make a read merge every hour of its
-- range. A page's own combinations are few enough to group on read (one
-- page, one range: its hour rows at the edges, its day rows between;
-- day rows are ordered by value, so a read takes all of the page's day
-- rows and keeps the range's). docs/benchmarks/history/issue-10.md
-- ("Dashboard rollups: insert cost") has the insert cost and the read
-- latency on the 10M-event history.
--
-- Upgrading: rows already in views_raw get their per-page rows once, from
-- the backfill below; then the view is replaced (DROP VIEW, CREATE
-- MATERIALIZED VIEW, as migration 004 does). Stop every validator before
-- upgrading a server deployment: rows inserted between the backfill and
-- the new view would miss their per-page rows, and between DROP and CREATE
-- every dim_rollup row. `viewcount serve` migrates before it starts
-- validating, so the embedded default needs nothing. Views whose raw rows
-- had already expired (--raw-retention) keep no per-page breakdown.
--
-- The backfill is rerun-safe: it carries a deduplication token and runs
-- single-threaded (as 004's copy), so a rerun after a crash produces the
-- same blocks (and per-block tokens) from the same views_raw, and it runs
-- only while the view is not yet the one below (which fills these rows
-- itself). Its GROUP BY spills to disk past 1 GB. On the 10M-event
-- benchmark history (8.5M valid views, 1k pages, 30 days) it wrote 14M
-- rows in 3 min 40 s on a shared 2-core box (sorted then: 5 GB RSS).
INSERT INTO dim_rollup
SETTINGS insert_deduplication_token = 'migration-010-page-breakdowns', insert_deduplicate = 1,
    max_threads = 1, max_insert_threads = 1, max_bytes_before_external_group_by = 1000000000
SELECT
    g AS grain,
    site,
    'page_dims' AS dim,
    page,
    arrayStringConcat([toString(ref_source), toString(ref_host), toString(utm_source), toString(utm_medium), toString(utm_campaign),
        toString(browser), toString(os), toString(device), toString(country), toString(screen)], '\x1f') AS value,
    if(g = 2, toStartOfHour(toDateTime(time, 'UTC')), toStartOfDay(toDateTime(time, 'UTC'))) AS bucket,
    count() AS views,
    uniqCombined64State(12)(visitor) AS uniques
FROM views_raw
ARRAY JOIN [2, 3] AS g
WHERE verdict = 'valid'
  AND (SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'dim_rollup_mv'
       AND position(create_table_query, 'grouping(p, combo)') > 0) = 0
GROUP BY grain, site, dim, page, value, bucket;

DROP VIEW IF EXISTS dim_rollup_mv;

-- As 008's, plus a third grouping set: the page and the combination of
-- every dimension, joined into one string key before aggregating (one key
-- to hash instead of ten: the hot-page insert paid +40 % CPU per row with
-- the ten, +23 % with one); each of its valid combinations becomes an hour
-- and a day row. grouping(p, combo) tells the sets apart (0: both in the
-- set, the third) where the values cannot, since a row from before
-- migration 007 holds '' in every dimension. Rejected combinations of the
-- third set fan out into nothing. That grouping() call is what the
-- backfill's guard looks for.
CREATE MATERIALIZED VIEW IF NOT EXISTS dim_rollup_mv TO dim_rollup AS
SELECT
    r.1 AS grain,
    site,
    r.2 AS dim,
    r.3 AS page,
    r.4 AS value,
    multiIf(r.1 = 1, m, r.1 = 2, toStartOfHour(m), toStartOfDay(m)) AS bucket,
    sum(c) AS views,
    uniqCombined64MergeState(12)(s) AS uniques
FROM
(
    SELECT site, toStartOfMinute(toDateTime(time, 'UTC')) AS m, verdict, views_raw.page AS p,
        ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen,
        arrayStringConcat([toString(ref_source), toString(ref_host), toString(utm_source), toString(utm_medium),
            toString(utm_campaign), toString(browser), toString(os), toString(device), toString(country), toString(screen)], '\x1f') AS combo,
        grouping(p, combo) AS set,
        count() AS c, uniqCombined64State(12)(visitor) AS s
    FROM views_raw
    GROUP BY GROUPING SETS ((site, m, verdict, ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen),
                            (site, m, verdict, p),
                            (site, m, verdict, p, combo))
)
ARRAY JOIN multiIf(set = 0 AND verdict = 'valid',
        [(2, 'page_dims', p, combo), (3, 'page_dims', p, combo)],
    set = 0,
        [],
    p = '' AND verdict = 'valid',
        [(1, 'total', '', ''), (2, 'total', '', ''), (3, 'total', '', ''),
             (2, 'source', '', toString(ref_source)), (3, 'source', '', toString(ref_source)),
             (2, 'referrer', '', toString(ref_host)), (3, 'referrer', '', toString(ref_host)),
             (2, 'utm_source', '', toString(utm_source)), (3, 'utm_source', '', toString(utm_source)),
             (2, 'utm_medium', '', toString(utm_medium)), (3, 'utm_medium', '', toString(utm_medium)),
             (2, 'utm_campaign', '', toString(utm_campaign)), (3, 'utm_campaign', '', toString(utm_campaign)),
             (2, 'browser', '', toString(browser)), (3, 'browser', '', toString(browser)),
             (2, 'os', '', toString(os)), (3, 'os', '', toString(os)),
             (2, 'device', '', toString(device)), (3, 'device', '', toString(device)),
             (2, 'country', '', toString(country)), (3, 'country', '', toString(country)),
             (2, 'screen', '', toString(screen)), (3, 'screen', '', toString(screen))],
    p = '',
        [(2, 'reason', '', toString(verdict)), (3, 'reason', '', toString(verdict))],
    verdict = 'valid',
        [(2, 'page', '', p), (3, 'page', '', p)],
        [(2, 'reason', p, toString(verdict)), (2, 'filtered_page', '', p), (3, 'filtered_page', '', p)]) AS r
GROUP BY grain, site, dim, page, value, bucket;
