-- Cheaper inserts (BenchmarkInsertBatch fell to a quarter of its rows/s
-- with migrations 008-010). Two changes, each measured
-- alone (docs/benchmarks/history/issue-10-session-2.md,
-- "Insert path (migration 011)"):
--
-- 1. Parts written by an insert are Compact (one data file for all
--    columns) instead of Wide (two files per column: views_raw has 32).
--    On this ext4 creating a file costs more than writing its bytes: the
--    inode allocator skips recently deleted inodes, and ClickHouse's
--    merges delete files all the time (perf: 13 % of the insert path's
--    CPU in ext4_create). Parts under a million rows stay Compact; merges
--    past that write Wide parts as before, which is what reads want for
--    large tables. Existing parts are not rewritten.
--
-- 2. Per-page breakdowns move from dim_rollup (010's one row per page,
--    hour or day, and combination of ten dimensions: on many-page traffic
--    nearly two rows and two sketches per view, about 10 µs of CPU per
--    view) to page_views: every valid view once, with its page, time,
--    visitor id and the ten dimensions, ordered by page. A breakdown of one
--    page reads that page's rows of the range and groups them
--    (queries/stats_breakdown_page.sql): no sketches to merge, exact at any
--    time of day, 17-23 ms p50 for the top page of the 10M-event history
--    (273k views in 30 days). Its rows expire with views_raw's
--    (--raw-retention, applied at start by rollup.ApplyRawRetention).
--
-- Upgrading: rows already in views_raw are copied into page_views once,
-- before its view exists (the copy carries a deduplication token and runs
-- single-threaded, so a rerun after a crash copies nothing twice, and it
-- runs only while page_views_mv does not exist); dim_rollup is rebuilt
-- without 010's page_dims rows. As for 004 and 010: stop every validator before upgrading a
-- server deployment (an insert between the copy and the new views would
-- miss page_views or dim_rollup); `viewcount serve` migrates before it
-- validates.
ALTER TABLE views_raw MODIFY SETTING min_rows_for_wide_part = 1000000;

ALTER TABLE page_rollup MODIFY SETTING min_rows_for_wide_part = 1000000;

-- time is the event's second in UTC (views_raw keeps milliseconds; no
-- breakdown needs them). The dimensions as views_raw stores them.
-- Partitioned by month like views_raw, so its retention TTL drops whole
-- parts (a month's) rather than rewriting them.
CREATE TABLE IF NOT EXISTS page_views
(
    site         LowCardinality(String),
    page         String,
    time         DateTime('UTC') CODEC(Delta, ZSTD),
    visitor      UInt64,
    ref_source   LowCardinality(String),
    ref_host     String,
    utm_source   LowCardinality(String),
    utm_medium   LowCardinality(String),
    utm_campaign String,
    browser      LowCardinality(String),
    os           LowCardinality(String),
    device       LowCardinality(String),
    country      LowCardinality(String),
    screen       LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (site, page, time)
SETTINGS min_rows_for_wide_part = 1000000, non_replicated_deduplication_window = 10000, ttl_only_drop_parts = 1;

INSERT INTO page_views
SETTINGS insert_deduplication_token = 'migration-011-page-views', insert_deduplicate = 1, max_threads = 1, max_insert_threads = 1
SELECT site, page, toDateTime(time, 'UTC') AS time, visitor,
    ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen
FROM views_raw
WHERE verdict = 'valid'
  AND (SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'page_views_mv') = 0;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_views_mv TO page_views AS
SELECT site, page, toDateTime(time, 'UTC') AS time, visitor,
    ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen
FROM views_raw
WHERE verdict = 'valid';

-- 008's view again (without 010's third grouping set).
DROP VIEW IF EXISTS dim_rollup_mv;

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
        count() AS c, uniqCombined64State(12)(visitor) AS s
    FROM views_raw
    GROUP BY GROUPING SETS ((site, m, verdict, ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen),
                            (site, m, verdict, p))
)
ARRAY JOIN multiIf(p = '' AND verdict = 'valid',
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

-- dim_rollup without 010's page_dims rows, rebuilt with 64 KiB granules
-- (as 009 rebuilt page_rollup, and for its reason: a read decodes whole
-- granules, and rows carrying 3 KiB sketches made the 1 MiB ones hold a
-- few hundred rows). A site's breakdown by page merges the day sketches
-- of the pages it shows, which are scattered over the value-ordered day
-- rows: on the 10M-event history the uniques of the top 100 pages over 30
-- days took 110 ms with 1 MiB granules and 55 ms with 64 KiB (top 10: 34
-- and 17 ms); reads of views alone did not change. CREATE OR REPLACE is
-- rerun-safe as 009 explains; dim_rollup_mv names the table and resolves
-- it when it runs.
CREATE OR REPLACE TABLE dim_rollup
(
    grain   Enum8('minute' = 1, 'hour' = 2, 'day' = 3),
    site    LowCardinality(String),
    dim     LowCardinality(String),
    page    String,
    value   String,
    bucket  DateTime('UTC'),
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64(12), UInt64)
)
ENGINE = AggregatingMergeTree
ORDER BY (site, dim, page, grain, if(grain = 'day', value, ''), bucket, value)
SETTINGS non_replicated_deduplication_window = 10000, index_granularity = 1024, index_granularity_bytes = 65536,
    min_rows_for_wide_part = 1000000
AS SELECT grain, site, dim, page, value, bucket, views, uniques FROM dim_rollup WHERE dim != 'page_dims';
