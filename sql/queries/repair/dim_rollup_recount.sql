-- dim_rollup_recount: the rows of dim_rollup in one month ({month:UInt32},
-- YYYYMM, from dim_rollup_months) that differ from a recount (`viewcount
-- check`), at most {limit} of them, each with the number of differing rows
-- of the month in all. Read-only.
--
-- The recount is what dim_rollup_fill would build: views_raw from {cutoff}
-- on, counted by dim_rollup_mv's SELECT (migration 022). Before the cutoff,
-- where the raw retention removed events, the rows are their own truth
-- (dim_rollup_prepare keeps them as they are), so only rows from the
-- cutoff on are compared. Views compare exactly; uniques compare the
-- estimates, which are equal for the same set of visitors however the
-- sketches were merged, with one exception. A uniqCombined64(12) sketch is
-- an exact set of up to 128 ids, then a HyperLogLog; a set already
-- holding 128 turns into the HyperLogLog on the next id merged into it,
-- even one it holds (ClickHouse's CombinedCardinalityEstimator checks the
-- size before the membership). So for exactly 128 visitors one merge
-- order leaves the exact 128 and another an estimate of them (124-130
-- seen): a row where either side reads 128 compares its views only. Any
-- other count is read the same on both sides (below 128 both sets are
-- exact; above, both are HyperLogLogs of the same ids).
SELECT
    grain,
    site,
    dim,
    page,
    value,
    toString(bucket) AS bucket,
    stored_views,
    recount_views,
    stored_uniques,
    recount_uniques,
    count() OVER () AS differing
FROM
(
    SELECT toString(grain) AS grain, toString(site) AS site, toString(dim) AS dim, page, value, bucket,
           toUInt64(sum(views)) AS stored_views,
           toUInt64(uniqCombined64Merge(12)(uniques)) AS stored_uniques
    FROM dim_rollup
    WHERE bucket >= {cutoff:DateTime('UTC')} AND toYYYYMM(bucket) = {month:UInt32}
    GROUP BY grain, site, dim, page, value, bucket
) AS s
FULL OUTER JOIN
(
    -- g: the view's grain, its Enum8 value 1..3 (minute, hour, day).
    SELECT arrayElement(['minute', 'hour', 'day'], g) AS grain, toString(site) AS site, dim, page, value, bucket,
           toUInt64(sum(views)) AS recount_views,
           toUInt64(uniqCombined64Merge(12)(uniques)) AS recount_uniques
    FROM
    (
        SELECT
            r.1 AS g,
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
            WHERE kind = 0 AND time >= {cutoff:DateTime('UTC')} AND toYYYYMM(time) = {month:UInt32}
              AND batch <= {fed:Map(UInt16, UInt64)}[partition]
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
        GROUP BY g, site, dim, page, value, bucket
    )
    GROUP BY grain, site, dim, page, value, bucket
) AS r USING (grain, site, dim, page, value, bucket)
WHERE (stored_views != recount_views
   OR (stored_uniques != recount_uniques AND stored_uniques != 128 AND recount_uniques != 128))
  AND (grain = 'total' OR (toDateTime(bucket, 'UTC') >= {from:DateTime('UTC')} AND toDateTime(bucket, 'UTC') < {to:DateTime('UTC')}))
ORDER BY site, dim, grain, page, value, bucket
LIMIT {limit:UInt32}
-- As dim_rollup_fill: a month's GROUP BY spills to disk past 1 GB.
SETTINGS max_bytes_before_external_group_by = 1000000000
