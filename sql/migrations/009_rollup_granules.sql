-- page_rollup rebuilt with small granules, so a first count read is fast.
--
-- Why: a point read (page_count, the api's first read of a page not yet in
-- its snapshot) decodes whole granules, and page_rollup's all-time rows
-- carry uniqCombined64 states of up to ~100 KB each. With the default
-- index_granularity_bytes (10 MiB) one read decoded hundreds of them per
-- part: 10M events stored, p99 132 ms over HTTP.
--
-- A granule's rows are sized from the average row of the block written, so
-- the bytes limit works only where states are large on average: in a
-- merged part's run of all-time rows, 64 KiB leaves ~2 rows per granule.
-- A freshly inserted part mixes those rows with many small minute rows,
-- and its all-time rows sit in granules of ~300 rows at 64 KiB (~800 at
-- 256 KiB, ~6,000 at the default), one per part holding the page; that is
-- why 64 KiB rather than the 256 KiB that merged parts alone would need.
-- docs/benchmarks/history/issue-10.md ("First read") has the sizes
-- measured (point reads merged and unmerged, the snapshot's batch refresh,
-- site_count, inserts).
--
-- index_granularity_bytes is readonly for a MergeTree table (an ALTER
-- that modifies it is refused), so the table is rebuilt. CREATE OR
-- REPLACE does the steps of a rebuild in one statement: it creates the new table
-- under a temporary name, copies the old rows into it, EXCHANGEs the two
-- atomically (the database is Atomic, chDB's and a server's default) and
-- drops the old one. That makes this migration safe to rerun at any point:
-- a crash before the exchange leaves page_rollup as it was (and a
-- _tmp_replace_* table that may be dropped), and a rerun after it copies
-- the new table into a fresh one again, so no row is ever copied twice
-- into the same table and no deduplication token is needed.
--
-- page_rollup_mv and the page_minute / page_hour / page_day / page_total
-- views name page_rollup and resolve it when they run, so they use the new
-- table without being recreated. Views inserted while the copy runs would
-- land in the old table and be lost with it: as for migration 004, stop
-- every validator before upgrading a server deployment (`viewcount serve`
-- migrates before it starts validating). rollup.Rebuild's
-- page_rollup_rebuild is CREATE TABLE ... AS page_rollup, which copies
-- these settings, so a repaired rollup keeps the small granules.
CREATE OR REPLACE TABLE page_rollup
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
SETTINGS non_replicated_deduplication_window = 10000, index_granularity_bytes = 65536
AS SELECT grain, site, page, bucket, views, uniques FROM page_rollup;
