-- Migration 019 on a cluster: rejected_rollup, who was filtered per site,
-- reason, hour and user agent, filled by its view on each host's
-- views_feed_local like the other rollups, and the three columns of
-- views_feed the view reads. Sharded by site like the rollups, so a
-- site's report asks one shard.
--
-- Unlike the single-node migration this copies nothing: the rejected
-- events stored before the upgrade stay in views_raw only (the report's
-- top lists start at the upgrade), as a rebuild on a cluster is not
-- available yet (README, "What does not work on a cluster yet").
ALTER TABLE views_feed_local ON CLUSTER '{cluster}'
    ADD COLUMN IF NOT EXISTS ua     String DEFAULT '',
    ADD COLUMN IF NOT EXISTS asn    UInt32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS origin LowCardinality(String) DEFAULT '';

ALTER TABLE views_feed ON CLUSTER '{cluster}'
    ADD COLUMN IF NOT EXISTS ua     String DEFAULT '',
    ADD COLUMN IF NOT EXISTS asn    UInt32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS origin LowCardinality(String) DEFAULT '';

CREATE TABLE IF NOT EXISTS rejected_rollup_local ON CLUSTER '{cluster}'
(
    site    LowCardinality(String),
    verdict LowCardinality(String),
    time    DateTime('UTC') CODEC(Delta, ZSTD),
    ua      String,
    ua_cut  Bool,
    browser LowCardinality(String),
    device  LowCardinality(String),
    asn     UInt32,
    origin  LowCardinality(String),
    events  SimpleAggregateFunction(sum, UInt64),
    last    SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/{database}/rejected_rollup', '{replica}')
PARTITION BY toYYYYMM(time)
ORDER BY (site, verdict, time, ua, ua_cut, browser, device, asn, origin)
SETTINGS replicated_deduplication_window = 10000, replicated_deduplication_window_seconds = 86400,
    ttl_only_drop_parts = 1, min_rows_for_wide_part = 1000000;

CREATE TABLE IF NOT EXISTS rejected_rollup ON CLUSTER '{cluster}'
(
    site    LowCardinality(String),
    verdict LowCardinality(String),
    time    DateTime('UTC'),
    ua      String,
    ua_cut  Bool,
    browser LowCardinality(String),
    device  LowCardinality(String),
    asn     UInt32,
    origin  LowCardinality(String),
    events  SimpleAggregateFunction(sum, UInt64),
    last    SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = Distributed('{cluster}', currentDatabase(), rejected_rollup_local, cityHash64(site));

CREATE MATERIALIZED VIEW IF NOT EXISTS rejected_rollup_mv ON CLUSTER '{cluster}' TO rejected_rollup_local AS
SELECT
    site,
    verdict,
    toStartOfHour(toDateTime(time, 'UTC')) AS time,
    if(length(views_feed_local.ua) <= 300, views_feed_local.ua, leftUTF8(views_feed_local.ua, lengthUTF8(left(views_feed_local.ua, 301)) - 1)) AS ua,
    length(views_feed_local.ua) > 300 AS ua_cut,
    browser,
    device,
    if(verdict = 'datacenter', views_feed_local.asn, 0) AS asn,
    if(verdict = 'foreign_origin', views_feed_local.origin, '') AS origin,
    count() AS events,
    max(views_feed_local.time) AS last
FROM views_feed_local
WHERE verdict != 'valid'
GROUP BY site, verdict, time, ua, ua_cut, browser, device, asn, origin;
