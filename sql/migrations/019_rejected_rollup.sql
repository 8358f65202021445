-- rejected_rollup: who was filtered, per site, UTC hour and reason, for
-- the invalid-traffic report's top user agents, browser and device
-- classes, datacenter networks and foreign page hosts (GET /invalid,
-- the dashboard's filtered panel, Grafana's invalid-traffic board),
-- which scanned views_raw until now. The API reads rollups, never
-- views_raw (DESIGN.md).
--
-- One row per site, reason (verdict), hour, user agent, browser, device
-- class, AS number and page host, with the events and the receive time
-- of the newest of them. Bounded: the agent is kept to its first 300
-- bytes, cut on a character boundary (what the report shows, api's
-- maxReportUA), with ua_cut saying the agent was longer; agents that
-- share those 300 bytes share a row. browser and device are the
-- validator's classification (views_raw's columns), in the key so the
-- classes add up; last lets a reader take an agent's newest
-- classification (argMax(browser, last)), as a later rule set may
-- classify it anew. asn is views_raw's only for datacenter verdicts
-- (the report's networks) and 0 otherwise, and origin (the page host,
-- migration 018) only for foreign_origin verdicts (the report's hosts)
-- and '' otherwise, so they split no other reason's rows. A rotating
-- network that sends a new agent with every event still makes a row per
-- event: the rows expire with views_raw's (--raw-retention, set at
-- start by rollup.ApplyRawRetention on the column named time, whole
-- months as ttl_only_drop_parts drops them), which is why the hour is
-- named time.
--
-- Hours are the grain: the report widens its range to whole UTC hours, as
-- the stats API does. Partitioned by month like views_raw, so a rebuild
-- (rollup.Rebuild: repairs, revalidations, corrections) swaps a month at a
-- time, as for page_views.
--
-- Upgrading: the rejected events already stored are counted into the
-- table once, before its view exists, as 011 did for page_views: every
-- row the feed has taken, up to the batch before each partition's latest
-- recorded feed (a validator redoes that feed when it starts, and the
-- view then counts it). The copy carries a deduplication token and runs
-- single-threaded, and runs only while rejected_rollup_mv does not exist,
-- so a rerun after a crash copies nothing twice. As for 004, 010-012:
-- stop every validator before upgrading a server deployment; `viewcount
-- serve` migrates before it validates.

-- The columns the new view reads, typed as views_raw's (queries/feed.sql
-- names them). A Null table stores nothing: adding columns rewrites
-- nothing.
ALTER TABLE views_feed
    ADD COLUMN IF NOT EXISTS ua     String DEFAULT '',
    ADD COLUMN IF NOT EXISTS asn    UInt32 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS origin LowCardinality(String) DEFAULT '';

CREATE TABLE IF NOT EXISTS rejected_rollup
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
ENGINE = AggregatingMergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (site, verdict, time, ua, ua_cut, browser, device, asn, origin)
SETTINGS non_replicated_deduplication_window = 10000, ttl_only_drop_parts = 1, min_rows_for_wide_part = 1000000;

-- The same SELECT as rejected_rollup_mv's below, on views_raw. The cut:
-- an agent of more than 300 bytes keeps the characters that end within
-- them. lengthUTF8 of its first 301 bytes counts the characters that
-- start within those; the last of them starts at byte 301 or runs past
-- byte 300, so one fewer is what fits.
INSERT INTO rejected_rollup
SETTINGS insert_deduplication_token = 'migration-019-rejected-rollup', insert_deduplicate = 1, max_threads = 1, max_insert_threads = 1
SELECT
    site,
    verdict,
    toStartOfHour(toDateTime(time, 'UTC')) AS time,
    if(length(views_raw.ua) <= 300, views_raw.ua, leftUTF8(views_raw.ua, lengthUTF8(left(views_raw.ua, 301)) - 1)) AS ua,
    length(views_raw.ua) > 300 AS ua_cut,
    browser,
    device,
    if(verdict = 'datacenter', views_raw.asn, 0) AS asn,
    if(verdict = 'foreign_origin', views_raw.origin, '') AS origin,
    count() AS events,
    max(views_raw.time) AS last
FROM views_raw
WHERE verdict != 'valid'
  AND (batch = 0 OR batch < (
      SELECT CAST((groupArray(partition), groupArray(first)), 'Map(UInt16, UInt64)')
      FROM (SELECT partition, argMax(first, last) AS first FROM rollup_feed GROUP BY partition))[partition])
  AND (SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'rejected_rollup_mv') = 0
GROUP BY site, verdict, time, ua, ua_cut, browser, device, asn, origin;

CREATE MATERIALIZED VIEW IF NOT EXISTS rejected_rollup_mv TO rejected_rollup AS
SELECT
    site,
    verdict,
    toStartOfHour(toDateTime(time, 'UTC')) AS time,
    if(length(views_feed.ua) <= 300, views_feed.ua, leftUTF8(views_feed.ua, lengthUTF8(left(views_feed.ua, 301)) - 1)) AS ua,
    length(views_feed.ua) > 300 AS ua_cut,
    browser,
    device,
    if(verdict = 'datacenter', views_feed.asn, 0) AS asn,
    if(verdict = 'foreign_origin', views_feed.origin, '') AS origin,
    count() AS events,
    max(views_feed.time) AS last
FROM views_feed
WHERE verdict != 'valid'
GROUP BY site, verdict, time, ua, ua_cut, browser, device, asn, origin;
