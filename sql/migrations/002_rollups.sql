-- Rollups of valid views per page: per minute, hour and day, and all time.
--
-- Each target is an AggregatingMergeTree filled by a materialized view on
-- views_raw. views is a SimpleAggregateFunction(sum, UInt64): an exact count
-- that merges by addition. uniques is the uniqCombined64 state of visitor
-- ids (HyperLogLog-class estimate, well under 1% error at any cardinality),
-- merged with uniqCombined64Merge. Rows for one key are only merged in the
-- background, so every read must aggregate again: sum(views),
-- uniqCombined64Merge(uniques) GROUP BY the key.
--
-- Every target keeps its own deduplication window: with
-- deduplicate_blocks_in_dependent_materialized_views = 1 a retried insert
-- into views_raw is dropped in the views' targets as well.
--
-- bucket is the start of the minute, hour or day in UTC.
CREATE TABLE IF NOT EXISTS page_minute
(
    site    LowCardinality(String),
    page    String,
    bucket  DateTime('UTC'),
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (site, page, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_minute_mv TO page_minute AS
SELECT
    site,
    page,
    toStartOfMinute(toDateTime(time, 'UTC')) AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_raw
WHERE verdict = 'valid'
GROUP BY site, page, bucket;

CREATE TABLE IF NOT EXISTS page_hour
(
    site    LowCardinality(String),
    page    String,
    bucket  DateTime('UTC'),
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(bucket)
ORDER BY (site, page, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_hour_mv TO page_hour AS
SELECT
    site,
    page,
    toStartOfHour(toDateTime(time, 'UTC')) AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_raw
WHERE verdict = 'valid'
GROUP BY site, page, bucket;

CREATE TABLE IF NOT EXISTS page_day
(
    site    LowCardinality(String),
    page    String,
    bucket  DateTime('UTC'),
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64, UInt64)
)
ENGINE = AggregatingMergeTree
PARTITION BY toYear(bucket)
ORDER BY (site, page, bucket)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_day_mv TO page_day AS
SELECT
    site,
    page,
    toStartOfDay(toDateTime(time, 'UTC')) AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_raw
WHERE verdict = 'valid'
GROUP BY site, page, bucket;

-- page_total: all-time counts per page; what public counters read.
CREATE TABLE IF NOT EXISTS page_total
(
    site    LowCardinality(String),
    page    String,
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64, UInt64)
)
ENGINE = AggregatingMergeTree
ORDER BY (site, page)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS page_total_mv TO page_total AS
SELECT
    site,
    page,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_raw
WHERE verdict = 'valid'
GROUP BY site, page;
