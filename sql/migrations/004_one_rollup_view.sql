-- One rollup table and one materialized view instead of four of each.
--
-- Why: every insert into views_raw writes a new part into every table a
-- materialized view feeds, and a part is a directory of a dozen files.
-- With four views an insert created five parts; on ext4 the file
-- creation, and the background merges that delete them again, cost more
-- CPU than the aggregation itself (perf on a load run: half of the store's
-- time in the kernel's inode allocator). One view writing all four grains
-- into one table makes it two parts per insert.
-- docs/benchmarks/history/round-2.md ("What changed in round 2") has the
-- before and after.
--
-- page_rollup holds, per grain, what page_minute / page_hour / page_day /
-- page_total held; those names become plain views over it, so analyst
-- queries and dashboards keep working. bucket is the start of the minute,
-- hour or day in UTC, and 1970-01-01 00:00:00 for the all-time grain.
--
-- The table is not partitioned: a partition key that separates grains or
-- months would make an insert write one part per partition it touches,
-- which is the cost this migration removes.
--
-- Upgrading a store that has data: the old targets are copied into
-- page_rollup once (the copy carries a deduplication token, so a rerun of
-- this migration after a crash does not copy twice) and then replaced by
-- the views. Stop every validator (the rollup writers) before upgrading a
-- server deployment: inserts between dropping the old views and creating
-- the new one would miss the rollups. `viewcount serve` migrates before it
-- starts validating, so the embedded default needs nothing.
CREATE TABLE IF NOT EXISTS page_rollup
(
    grain   Enum8('minute' = 1, 'hour' = 2, 'day' = 3, 'total' = 4),
    site    LowCardinality(String),
    page    String,
    bucket  DateTime('UTC'),
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64, UInt64)
)
ENGINE = AggregatingMergeTree
ORDER BY (site, grain, page, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

DROP VIEW IF EXISTS page_minute_mv;
DROP VIEW IF EXISTS page_hour_mv;
DROP VIEW IF EXISTS page_day_mv;
DROP VIEW IF EXISTS page_total_mv;

-- ARRAY JOIN turns each valid view into one row per grain before the
-- GROUP BY, so one aggregation fills all four.
CREATE MATERIALIZED VIEW IF NOT EXISTS page_rollup_mv TO page_rollup AS
SELECT
    g.1 AS grain,
    site,
    page,
    g.2 AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_raw
ARRAY JOIN [
    (1, toStartOfMinute(toDateTime(time, 'UTC'))), -- 1..4: the grain's Enum8 value
    (2, toStartOfHour(toDateTime(time, 'UTC'))),
    (3, toStartOfDay(toDateTime(time, 'UTC'))),
    (4, toDateTime(0, 'UTC'))
] AS g
WHERE verdict = 'valid'
GROUP BY grain, site, page, bucket;

-- The copy of the old targets. Each runs only while its source is still
-- the table migration 002 created (a rerun after the views replaced them
-- copies nothing), single-threaded so its blocks, and the deduplication
-- tokens derived from them, come out the same on a rerun.
INSERT INTO page_rollup
SETTINGS insert_deduplication_token = 'migration-004-minute', insert_deduplicate = 1, max_threads = 1, max_insert_threads = 1
SELECT 'minute', site, page, bucket, views, uniques FROM page_minute
WHERE (SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'page_minute') = 'AggregatingMergeTree';

INSERT INTO page_rollup
SETTINGS insert_deduplication_token = 'migration-004-hour', insert_deduplicate = 1, max_threads = 1, max_insert_threads = 1
SELECT 'hour', site, page, bucket, views, uniques FROM page_hour
WHERE (SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'page_hour') = 'AggregatingMergeTree';

INSERT INTO page_rollup
SETTINGS insert_deduplication_token = 'migration-004-day', insert_deduplicate = 1, max_threads = 1, max_insert_threads = 1
SELECT 'day', site, page, bucket, views, uniques FROM page_day
WHERE (SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'page_day') = 'AggregatingMergeTree';

INSERT INTO page_rollup
SETTINGS insert_deduplication_token = 'migration-004-total', insert_deduplicate = 1, max_threads = 1, max_insert_threads = 1
SELECT 'total', site, page, toDateTime(0, 'UTC'), views, uniques FROM page_total
WHERE (SELECT engine FROM system.tables WHERE database = currentDatabase() AND name = 'page_total') = 'AggregatingMergeTree';

DROP TABLE IF EXISTS page_minute;
DROP TABLE IF EXISTS page_hour;
DROP TABLE IF EXISTS page_day;
DROP TABLE IF EXISTS page_total;

CREATE VIEW IF NOT EXISTS page_minute AS
SELECT site, page, bucket, views, uniques FROM page_rollup WHERE grain = 'minute';

CREATE VIEW IF NOT EXISTS page_hour AS
SELECT site, page, bucket, views, uniques FROM page_rollup WHERE grain = 'hour';

CREATE VIEW IF NOT EXISTS page_day AS
SELECT site, page, bucket, views, uniques FROM page_rollup WHERE grain = 'day';

CREATE VIEW IF NOT EXISTS page_total AS
SELECT site, page, views, uniques FROM page_rollup WHERE grain = 'total';
