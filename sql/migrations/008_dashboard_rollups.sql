-- dim_rollup: what the creator's dashboard and the stats API read (issue
-- 10): valid views and a uniqCombined64 sketch of visitor ids per site,
-- UTC bucket, dimension and value, and rejected events per reason.
--
-- One table and one materialized view for every breakdown, for the reason
-- migration 004 gives: each table a view feeds costs every insert into
-- views_raw a new part (a dozen files, later merged away).
--
-- Rows, by dim (value as stored on views_raw; '' is unknown):
--   total          page ''      value ''         minute, hour, day  the site's timeseries, summary, realtime
--   source, referrer, utm_source, utm_medium, utm_campaign, browser, os,
--   device, country, screen
--                  page ''      value = the dim  hour, day          the site's breakdowns
--   page           page ''      value = page     hour, day          top pages
--   reason         page ''      value = verdict  hour, day          rejected events by reason
--   reason         page = page  value = verdict  hour               a page's rejected events
--   filtered_page  page ''      value = page     hour, day          rejected events per page (top filtered pages)
-- source and referrer are ref_source (a grouped name like "Google",
-- "(direct)" for none) and ref_host. A page's own totals are page_rollup's
-- (migration 004: minute, hour, day).
--
-- Ranges are read as the whole UTC days inside them from the day rows plus
-- the hours at the edges from the hour rows: views add and sketches merge
-- as unions, so a day in the site's time zone is exact at any length of
-- range. Per-page reason rows are hours only (a page's slice is small).
--
-- What it costs and what was left out (BenchmarkInsertBatch, and
-- docs/benchmarks/history/issue-10.md, "Dashboard rollups: insert cost"):
-- the insert path's cost is rows through the view's GROUP BY and the size
-- of the sketches it writes, so
--   * the view first aggregates the insert's rows by every dimension at
--     once (an insert holds a second of traffic: few distinct combinations)
--     and only then fans each combination out into its dim rows: 25 rows
--     per view fanned out cost about twice the whole insert path before;
--   * the sketches are uniqCombined64(12): exact up to 128 distinct ids,
--     then a HyperLogLog of 2^12 cells (3 KiB, relative standard error
--     1.04/sqrt(2^12) = 1.6 %). At the default precision 17 (96 KiB per
--     value and bucket above 4096 ids) about 90 such sketches per insert
--     cost the hot-page insert +70 %, and reading them is what a stats call
--     costs: merging a month of precision-14 sketches of 1k pages took
--     0.2-0.9 s, of 17 referrers 0.1 s;
--   * breakdowns of one page by source, country, … are not kept: with a
--     page in the key a combination is nearly one view, so they cost as
--     much as the fan-out itself (page × source alone: +70 % CPU per row on
--     many-page traffic). The API answers a page filter on those with 400.
--
-- ORDER BY (site, dim, page, grain, if(grain = 'day', value, ''), bucket,
-- value): every read names the site, the dim, the page ('' or one) and a
-- grain, then a bucket range. Hour rows are ordered by bucket, so a
-- range's edge hours are one slice; day rows by value first, so a
-- breakdown merges the sketches of just the values it returns (see
-- queries/stats_breakdown.sql). Granules are small (1024 rows, 1 MiB)
-- because a read wants a few rows and sketch-sized rows are kilobytes.
-- Not partitioned, for migration 004's reason (a partition key makes an
-- insert write one part per partition it touches).
CREATE TABLE IF NOT EXISTS dim_rollup
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
SETTINGS non_replicated_deduplication_window = 10000, index_granularity = 1024, index_granularity_bytes = 1048576;

-- The inner query aggregates the insert twice at once (GROUPING SETS): by
-- minute, verdict and every dimension (p is '' there: a column outside a
-- set reads as its default, and a stored page is never '', ingest refuses
-- an empty one), and by minute, verdict and page. The outer fans each combination out into its rows
-- (r = grain, dim, page, value; the bucket follows from the grain) and
-- merges the sketches of the rows that meet. Rejected events take the
-- first set's reason rows and the second set's per-page ones.
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
