-- dim_rollup_fill: recounts one month ({month:UInt32}, YYYYMM, a views_raw
-- partition) of views_raw into the staging table, from {cutoff} on. The
-- SELECT is dim_rollup_mv's (migration 022, 008's view), with only the
-- month and the cutoff added to its inner WHERE, so the rebuilt rows are
-- the rows the materialized view would have written. The view runs per
-- insert, this per month: the minute groups of the inner query are the
-- same either way (a minute lies in one month), and the outer fan-out's
-- hour and day rows of different inserts are merged by the engine like any
-- others (views add, sketches merge as unions).
--
-- A month's inner GROUP BY holds about a group per distinct minute and
-- combination of dimensions, up to one per view; past 1 GB it spills to
-- disk (as migration 010's backfill does) instead of growing without bound.
INSERT INTO dim_rollup_rebuild
SETTINGS insert_deduplicate = 0, max_bytes_before_external_group_by = 1000000000
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
        ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen, asn,
        count() AS c, uniqCombined64State(12)(visitor) AS s
    FROM views_raw
    WHERE kind = 0 AND toYYYYMM(time) = {month:UInt32} AND time >= {cutoff:DateTime('UTC')}
      AND batch <= {fed:Map(UInt16, UInt64)}[partition]
      AND ({site:String} = '' OR site = {site:String}) AND time < {to:DateTime('UTC')}
    GROUP BY GROUPING SETS ((site, m, verdict, ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen, asn),
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
             (2, 'screen', '', toString(screen)), (3, 'screen', '', toString(screen)),
             (2, 'asn', '', toString(asn)), (3, 'asn', '', toString(asn))],
    p = '',
        [(2, 'reason', '', toString(verdict)), (3, 'reason', '', toString(verdict))],
    verdict = 'valid',
        [(2, 'page', '', p), (3, 'page', '', p)],
        [(2, 'reason', p, toString(verdict)), (2, 'filtered_page', '', p), (3, 'filtered_page', '', p)]) AS r
GROUP BY grain, site, dim, page, value, bucket
