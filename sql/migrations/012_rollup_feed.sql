-- The rollups leave the insert path (BenchmarkInsertBatch with
-- the three views of migrations 004, 008 and 011 inserted 122k-187k rows/s
-- against 447k-490k for views_raw alone: see
-- docs/benchmarks/history/issue-10-session-2.md, "Insert path (migration
-- 011)").
--
-- Before: every validator insert into views_raw ran the three materialized
-- views on its block. Each view costs a fixed ~20-25 ms of CPU per insert
-- whatever its rows, and aggregates only within the insert, so a busy
-- partition paid the views on every 50k-row batch and a quiet one several
-- times a second.
--
-- After: the views read views_feed, a Null table (it stores nothing; an
-- insert only runs the views attached to it). The rollup feed
-- (rollup/feed.go, queries/feed.sql) copies a partition's newly stored
-- rows from views_raw into it every few seconds or every 200k rows, in
-- stream order, with a deduplication token derived from the range of
-- batches it covers, recorded in rollup_feed before the insert: exactly
-- once as the batch inserts are, through the same mechanism. The views'
-- SELECTs are unchanged.
--
-- batch is the last stream sequence of the insert that stored the row.
-- The feed selects by batch, not seq: a verdict held for settling is
-- stored by a later batch under its own, earlier sequence. Rows stored
-- before this migration read 0; the old views had counted them, and the
-- feed never takes batch 0.
--
-- Upgrading: as for 004, 010 and 011, stop every validator first (a row
-- inserted between the DROP and the CREATE below would miss the rollups);
-- `viewcount serve` migrates before it validates.
ALTER TABLE views_raw
    ADD COLUMN IF NOT EXISTS batch UInt64 DEFAULT 0 CODEC(Delta, ZSTD);

-- The feed reads one partition's newest batches; rows sorted by site and
-- time carry batches that rise with time, so a granule's range is narrow.
ALTER TABLE views_raw ADD INDEX IF NOT EXISTS batch_minmax batch TYPE minmax GRANULARITY 1;

-- The columns the views read, typed as views_raw's.
CREATE TABLE IF NOT EXISTS views_feed
(
    time         DateTime64(3, 'UTC'),
    site         LowCardinality(String),
    page         String,
    visitor      UInt64,
    verdict      LowCardinality(String),
    utm_source   LowCardinality(String),
    utm_medium   LowCardinality(String),
    utm_campaign String,
    country      LowCardinality(String),
    ref_host     String,
    ref_source   LowCardinality(String),
    browser      LowCardinality(String),
    os           LowCardinality(String),
    device       LowCardinality(String),
    screen       LowCardinality(String)
)
ENGINE = Null;

-- One row per feed, written before its insert: the partition's range of
-- batches (first..last) and the receive time of its oldest row (a bound
-- that lets the feed's read skip older parts). The latest row of a
-- partition is its progress, and the feed to redo after a crash. Kept a
-- week, which is more than any restart needs. A record written twice (a
-- retried insert) is harmless: readers take each partition's highest.
CREATE TABLE IF NOT EXISTS rollup_feed
(
    partition UInt16,
    first     UInt64,
    last      UInt64,
    since     DateTime64(3, 'UTC'),
    at        DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = MergeTree
ORDER BY (partition, last)
TTL toDateTime(at) + INTERVAL 7 DAY
SETTINGS non_replicated_deduplication_window = 100;

DROP VIEW IF EXISTS page_rollup_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_rollup_mv TO page_rollup AS
SELECT
    g.1 AS grain,
    site,
    page,
    g.2 AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_feed
ARRAY JOIN [
    (1, toStartOfMinute(toDateTime(time, 'UTC'))), -- 1..4: the grain's Enum8 value
    (2, toStartOfHour(toDateTime(time, 'UTC'))),
    (3, toStartOfDay(toDateTime(time, 'UTC'))),
    (4, toDateTime(0, 'UTC'))
] AS g
WHERE verdict = 'valid'
GROUP BY grain, site, page, bucket;

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
    SELECT site, toStartOfMinute(toDateTime(time, 'UTC')) AS m, verdict, views_feed.page AS p,
        ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen,
        count() AS c, uniqCombined64State(12)(visitor) AS s
    FROM views_feed
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

DROP VIEW IF EXISTS page_views_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_views_mv TO page_views AS
SELECT site, page, toDateTime(time, 'UTC') AS time, visitor,
    ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen
FROM views_feed
WHERE verdict = 'valid';
