-- The cluster schema: what sql/migrations 001-015 leave on one machine,
-- for a ClickHouse cluster (sql/cluster/README.md explains the design).
-- Applied by `viewcount … --cluster NAME` (rollup.MigrateCluster), which
-- puts the cluster's name where '{cluster}' stands; {shard}, {replica}
-- and {database} are the servers' own macros, expanded on each host.
--
-- Every stored table is two: <name>_local on each host, Replicated
-- within its shard (Keeper path /clickhouse/tables/{shard}/{database}/
-- <name>), and <name>, a Distributed table over the shards' <name>_local,
-- which every role reads and writes as before: no query changes. Its
-- columns are written out, not taken with AS <name>_local, which ON
-- CLUSTER has resolved in each host's default database (ClickHouse
-- #37318); a Distributed table stores nothing, so it has no codecs.
-- The materialized views hang on each host's local views_feed_local and
-- write that host's local rollups.
--
-- Deduplication: Replicated tables keep the block ids of their last
-- inserts in Keeper (replicated_deduplication_window, set to the 10,000
-- the single-node tables keep; for a day). An insert into a Distributed
-- table in the foreground (distributed_foreground_insert = 1, which
-- MigrateCluster checks) is split by the sharding key, and each shard's
-- part is inserted there with the insert's settings, its
-- insert_deduplication_token included; a retried insert splits the same
-- rows the same way, so each shard drops its repeat. views_raw and
-- rollup_feed are sharded by the stream partition, so a validator's
-- batch (one partition) lands whole on one shard, as on one machine.
--
-- Every statement is IF NOT EXISTS: a run interrupted half way is
-- completed by the next. A change to sql/migrations that changes a table
-- needs a new file here (TestClusterSchema fails until the tables match).

-- views_raw: every judged event (migrations 001, 003, 006, 007, 012-015).
CREATE TABLE IF NOT EXISTS views_raw_local ON CLUSTER '{cluster}'
(
    time            DateTime64(3, 'UTC') CODEC(Delta, ZSTD),
    site            LowCardinality(String),
    page            String,
    referrer        String,
    ua              String,
    event_id        String,
    visitor         UInt64,
    network         UInt64,
    webdriver       Bool,
    datacenter      Bool DEFAULT false,
    hints_present   Bool DEFAULT false,
    screen_w        UInt16 DEFAULT 0,
    screen_h        UInt16 DEFAULT 0,
    languages       UInt8 DEFAULT 0,
    tz              Bool DEFAULT false,
    ua_data         Bool DEFAULT false,
    secure_context  Bool DEFAULT false,
    source          LowCardinality(String),
    verdict         LowCardinality(String),
    partition       UInt16,
    seq             UInt64,
    idx             UInt32,
    utm_source      LowCardinality(String) DEFAULT '',
    utm_medium      LowCardinality(String) DEFAULT '',
    utm_campaign    String DEFAULT '',
    country         LowCardinality(String) DEFAULT '',
    ref_host        String DEFAULT '',
    ref_source      LowCardinality(String) DEFAULT '',
    browser         LowCardinality(String) DEFAULT '',
    os              LowCardinality(String) DEFAULT '',
    device          LowCardinality(String) DEFAULT '',
    screen          LowCardinality(String) DEFAULT '',
    batch           UInt64 DEFAULT 0 CODEC(Delta, ZSTD),
    req_flags       UInt16 DEFAULT 0,
    asn             UInt32 DEFAULT 0,
    rules           LowCardinality(String) DEFAULT '',
    window_reported Bool DEFAULT false,
    window_w        UInt16 DEFAULT 0,
    window_h        UInt16 DEFAULT 0,
    INDEX seq_minmax seq TYPE minmax GRANULARITY 1,
    INDEX batch_minmax batch TYPE minmax GRANULARITY 1
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/views_raw', '{replica}')
PARTITION BY toYYYYMM(time)
ORDER BY (site, verdict, time)
SETTINGS replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 86400,
    ttl_only_drop_parts = 1, min_rows_for_wide_part = 1000000;

-- Sharded by the stream partition: a batch is one partition's, so it
-- lands on one shard, and the feed's read of a partition reads one shard.
CREATE TABLE IF NOT EXISTS views_raw ON CLUSTER '{cluster}'
(
    time            DateTime64(3, 'UTC'),
    site            LowCardinality(String),
    page            String,
    referrer        String,
    ua              String,
    event_id        String,
    visitor         UInt64,
    network         UInt64,
    webdriver       Bool,
    datacenter      Bool DEFAULT false,
    hints_present   Bool DEFAULT false,
    screen_w        UInt16 DEFAULT 0,
    screen_h        UInt16 DEFAULT 0,
    languages       UInt8 DEFAULT 0,
    tz              Bool DEFAULT false,
    ua_data         Bool DEFAULT false,
    secure_context  Bool DEFAULT false,
    source          LowCardinality(String),
    verdict         LowCardinality(String),
    partition       UInt16,
    seq             UInt64,
    idx             UInt32,
    utm_source      LowCardinality(String) DEFAULT '',
    utm_medium      LowCardinality(String) DEFAULT '',
    utm_campaign    String DEFAULT '',
    country         LowCardinality(String) DEFAULT '',
    ref_host        String DEFAULT '',
    ref_source      LowCardinality(String) DEFAULT '',
    browser         LowCardinality(String) DEFAULT '',
    os              LowCardinality(String) DEFAULT '',
    device          LowCardinality(String) DEFAULT '',
    screen          LowCardinality(String) DEFAULT '',
    batch           UInt64 DEFAULT 0,
    req_flags       UInt16 DEFAULT 0,
    asn             UInt32 DEFAULT 0,
    rules           LowCardinality(String) DEFAULT '',
    window_reported Bool DEFAULT false,
    window_w        UInt16 DEFAULT 0,
    window_h        UInt16 DEFAULT 0
)
ENGINE = Distributed('{cluster}', currentDatabase(), views_raw_local, partition);

-- page_rollup: valid views and visitor sketches per page and minute,
-- hour, day, all time (migrations 004, 009, 011).
CREATE TABLE IF NOT EXISTS page_rollup_local ON CLUSTER '{cluster}'
(
    grain   Enum8('minute' = 1, 'hour' = 2, 'day' = 3, 'total' = 4),
    site    LowCardinality(String),
    page    String,
    bucket  DateTime('UTC'),
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64, UInt64)
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/{database}/page_rollup', '{replica}')
ORDER BY (site, grain, page, bucket)
SETTINGS replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 86400,
    index_granularity_bytes = 65536, min_rows_for_wide_part = 1000000;

-- The rollups and page_views are sharded by site, as views_feed is (the
-- views write each host's own): a site's rows are on one shard, so a
-- read of one site (every API read) with optimize_skip_unused_shards = 1
-- asks that shard alone. A read merges the shards' partial aggregates
-- (sums, and sketches as unions), so counts are the same either way.
CREATE TABLE IF NOT EXISTS page_rollup ON CLUSTER '{cluster}'
(
    grain   Enum8('minute' = 1, 'hour' = 2, 'day' = 3, 'total' = 4),
    site    LowCardinality(String),
    page    String,
    bucket  DateTime('UTC'),
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64, UInt64)
)
ENGINE = Distributed('{cluster}', currentDatabase(), page_rollup_local, cityHash64(site));

-- dim_rollup: the dashboard's breakdowns (migrations 008, 010, 011).
CREATE TABLE IF NOT EXISTS dim_rollup_local ON CLUSTER '{cluster}'
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
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/{database}/dim_rollup', '{replica}')
ORDER BY (site, dim, page, grain, if(grain = 'day', value, ''), bucket, value)
SETTINGS replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 86400,
    index_granularity = 1024, index_granularity_bytes = 65536, min_rows_for_wide_part = 1000000;

CREATE TABLE IF NOT EXISTS dim_rollup ON CLUSTER '{cluster}'
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
ENGINE = Distributed('{cluster}', currentDatabase(), dim_rollup_local, cityHash64(site));

-- page_views: every valid view, ordered by page (migration 011).
CREATE TABLE IF NOT EXISTS page_views_local ON CLUSTER '{cluster}'
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
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/page_views', '{replica}')
PARTITION BY toYYYYMM(time)
ORDER BY (site, page, time)
SETTINGS replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 86400,
    min_rows_for_wide_part = 1000000, ttl_only_drop_parts = 1;

CREATE TABLE IF NOT EXISTS page_views ON CLUSTER '{cluster}'
(
    site         LowCardinality(String),
    page         String,
    time         DateTime('UTC'),
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
ENGINE = Distributed('{cluster}', currentDatabase(), page_views_local, cityHash64(site));

-- views_feed: the Null table the feed inserts into; its views fill the
-- rollups (migration 012). The feed inserts into the Distributed
-- views_feed, which hands each host its sites' rows: the views run there
-- and write that host's local rollups. The feed reads its rows in stream
-- order with one thread, so a redone feed sends the same rows, split the
-- same way, and each shard's rollups drop the repeat by its token
-- (deduplicate_blocks_in_dependent_materialized_views, set by the feed).
CREATE TABLE IF NOT EXISTS views_feed_local ON CLUSTER '{cluster}'
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

CREATE TABLE IF NOT EXISTS views_feed ON CLUSTER '{cluster}'
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
ENGINE = Distributed('{cluster}', currentDatabase(), views_feed_local, cityHash64(site));

-- rollup_feed: each feed's range of batches, recorded before it runs
-- (migration 012). Sharded by partition, beside the partition's events.
CREATE TABLE IF NOT EXISTS rollup_feed_local ON CLUSTER '{cluster}'
(
    partition UInt16,
    first     UInt64,
    last      UInt64,
    since     DateTime64(3, 'UTC'),
    at        DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/{database}/rollup_feed', '{replica}')
ORDER BY (partition, last)
TTL toDateTime(at) + INTERVAL 7 DAY
SETTINGS replicated_deduplication_window = 100;

CREATE TABLE IF NOT EXISTS rollup_feed ON CLUSTER '{cluster}'
(
    partition UInt16,
    first     UInt64,
    last      UInt64,
    since     DateTime64(3, 'UTC'),
    at        DateTime64(3, 'UTC') DEFAULT now64(3)
)
ENGINE = Distributed('{cluster}', currentDatabase(), rollup_feed_local, partition);

-- The materialized views of migration 012, on each host's local tables.
CREATE MATERIALIZED VIEW IF NOT EXISTS page_rollup_mv ON CLUSTER '{cluster}' TO page_rollup_local AS
SELECT
    g.1 AS grain,
    site,
    page,
    g.2 AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_feed_local
ARRAY JOIN [
    (1, toStartOfMinute(toDateTime(time, 'UTC'))), -- 1..4: the grain's Enum8 value
    (2, toStartOfHour(toDateTime(time, 'UTC'))),
    (3, toStartOfDay(toDateTime(time, 'UTC'))),
    (4, toDateTime(0, 'UTC'))
] AS g
WHERE verdict = 'valid'
GROUP BY grain, site, page, bucket;

CREATE MATERIALIZED VIEW IF NOT EXISTS dim_rollup_mv ON CLUSTER '{cluster}' TO dim_rollup_local AS
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
    SELECT site, toStartOfMinute(toDateTime(time, 'UTC')) AS m, verdict, views_feed_local.page AS p,
        ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen,
        count() AS c, uniqCombined64State(12)(visitor) AS s
    FROM views_feed_local
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

CREATE MATERIALIZED VIEW IF NOT EXISTS page_views_mv ON CLUSTER '{cluster}' TO page_views_local AS
SELECT site, page, toDateTime(time, 'UTC') AS time, visitor,
    ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen
FROM views_feed_local
WHERE verdict = 'valid';

-- Migration 004's views over page_rollup, on every host.
CREATE VIEW IF NOT EXISTS page_minute ON CLUSTER '{cluster}' AS
SELECT site, page, bucket, views, uniques FROM page_rollup WHERE grain = 'minute';

CREATE VIEW IF NOT EXISTS page_hour ON CLUSTER '{cluster}' AS
SELECT site, page, bucket, views, uniques FROM page_rollup WHERE grain = 'hour';

CREATE VIEW IF NOT EXISTS page_day ON CLUSTER '{cluster}' AS
SELECT site, page, bucket, views, uniques FROM page_rollup WHERE grain = 'day';

CREATE VIEW IF NOT EXISTS page_total ON CLUSTER '{cluster}' AS
SELECT site, page, views, uniques FROM page_rollup WHERE grain = 'total';
