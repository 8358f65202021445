-- rollup_diff: page_rollup rows (every grain) that differ from a recount of
-- views_raw's valid rows, in views or in uniques. Empty when the rollups
-- are exact. The recount spells out the same grains as page_rollup_mv.
SELECT
    grain,
    site,
    page,
    bucket,
    r.views AS rollup_views,
    c.views AS recount_views,
    r.uniques AS rollup_uniques,
    c.uniques AS recount_uniques
FROM
(
    SELECT toUInt8(grain) AS grain, site, page, bucket,
           toUInt64(sum(views)) AS views, toUInt64(uniqCombined64Merge(uniques)) AS uniques
    FROM page_rollup
    GROUP BY grain, site, page, bucket
) AS r
FULL OUTER JOIN
(
    SELECT toUInt8(g.1) AS grain, site, page, g.2 AS bucket,
           toUInt64(count()) AS views, toUInt64(uniqCombined64(visitor)) AS uniques
    FROM views_raw
    ARRAY JOIN [
        (1, toStartOfMinute(toDateTime(time, 'UTC'))),
        (2, toStartOfHour(toDateTime(time, 'UTC'))),
        (3, toStartOfDay(toDateTime(time, 'UTC'))),
        (4, toDateTime(0, 'UTC'))
    ] AS g
    WHERE verdict = 'valid'
    GROUP BY grain, site, page, bucket
) AS c
USING (grain, site, page, bucket)
WHERE rollup_views != recount_views OR rollup_uniques != recount_uniques
ORDER BY grain, site, page, bucket
LIMIT 20
