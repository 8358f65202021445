-- dim_rollup: what the creator's dashboard and the stats API read (issue
-- 10): valid views and the uniqCombined64 state of visitor ids per site,
-- UTC bucket, dimension and value, and rejected events per reason.
--
-- One table and one materialized view for every breakdown, for the reason
-- migration 004 gives: each table a view feeds costs every insert into
-- views_raw a new part (a dozen files, later merged away), which cost more
-- than the aggregation itself. The view turns each row of views_raw into
-- one row per (grain, page, dim) with ARRAY JOIN and aggregates them in one
-- GROUP BY, so an insert writes one part here.
--
-- Rows, by dim (value as stored on views_raw; '' is unknown):
--   total                      value ''         grains minute, hour, day (the site's timeseries, realtime)
--   page                       value = page     hour, day (top pages)
--   source, referrer, utm_source, utm_medium, utm_campaign, browser, os,
--   device, country, screen    value = the dim  hour, day, for all pages (page = '') and again per page
--                                                (page = the page: "where did this page's viewers come from")
--   reason                     value = verdict  hour, day, rejected events only, all pages and per page
--   filtered_page              value = page     hour, day, rejected events only, all reasons (top filtered pages)
-- A page's own totals are page_rollup's (migration 004), which has them
-- per minute, hour and day already.
--
-- Why hour and day for everything: ranges are read as whole UTC days from
-- the day grain plus hours at the edges, which makes a day in the site's
-- time zone (or any hour-aligned range) exact at the cost of one more
-- index range, whatever the range's length. source and referrer are
-- ref_source (a grouped name like "Google", "(direct)" for none) and
-- ref_host.
--
-- ORDER BY (site, dim, page, grain, bucket, value): every read names the
-- site, the dim, the page ('' or one) and a grain, then a bucket range, so
-- it reads one contiguous slice of the index per grain. Not partitioned,
-- for migration 004's reason (a partition key makes an insert write one
-- part per partition it touches). uniques of rejected events are kept too
-- (nothing reads them yet; a per-row choice of aggregate is not possible).
CREATE TABLE IF NOT EXISTS dim_rollup
(
    grain   Enum8('minute' = 1, 'hour' = 2, 'day' = 3),
    site    LowCardinality(String),
    dim     LowCardinality(String),
    page    String,
    value   String,
    bucket  DateTime('UTC'),
    views   SimpleAggregateFunction(sum, UInt64),
    uniques AggregateFunction(uniqCombined64, UInt64)
)
ENGINE = AggregatingMergeTree
ORDER BY (site, dim, page, grain, bucket, value)
SETTINGS non_replicated_deduplication_window = 10000;

-- r is (grain, dim, page, value); the bucket follows from the grain. Valid
-- rows and rejected rows get different lists; the dims list is written
-- once and doubled for all pages and the row's own page by arrayMap.
CREATE MATERIALIZED VIEW IF NOT EXISTS dim_rollup_mv TO dim_rollup AS
SELECT
    r.1 AS grain,
    site,
    r.2 AS dim,
    r.3 AS page,
    r.4 AS value,
    multiIf(r.1 = 1, toStartOfMinute(toDateTime(time, 'UTC')),
            r.1 = 2, toStartOfHour(toDateTime(time, 'UTC')),
            toStartOfDay(toDateTime(time, 'UTC'))) AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_raw
ARRAY JOIN arrayConcat(
    if(verdict = 'valid', [(1, 'total', '', ''), (2, 'total', '', ''), (3, 'total', '', '')], []),
    arrayFlatten(arrayMap(x -> [(2, x.1, x.2, x.3), (3, x.1, x.2, x.3)],
        if(verdict = 'valid',
           arrayConcat(
               [('page', '', views_raw.page)],
               arrayFlatten(arrayMap(p -> [
                   ('source', p, toString(ref_source)), ('referrer', p, ref_host),
                   ('utm_source', p, toString(utm_source)), ('utm_medium', p, toString(utm_medium)),
                   ('utm_campaign', p, utm_campaign), ('browser', p, toString(browser)), ('os', p, toString(os)),
                   ('device', p, toString(device)), ('country', p, toString(country)), ('screen', p, toString(screen))],
                   ['', views_raw.page]))),
           [('reason', '', toString(verdict)), ('reason', views_raw.page, toString(verdict)), ('filtered_page', '', views_raw.page)])))
) AS r
GROUP BY grain, site, dim, page, value, bucket;
