-- page_engaged_counts: the all-time engaged views of many pages of one
-- site, for the public counts of a site counting engaged views
-- (count_mode "engaged", docs/engagement.md): engagement_rollup's day rows
-- of dim 'page', the engaged-time histogram from bucket {bucket:UInt8}
-- (the site's engaged_after) up, summed unmerged (every column is a sum).
-- open is the views of the hours from {recent:DateTime} (the start of the
-- hour an engagement horizon before the reader's clock) that are not
-- engaged yet (page_rollup's valid views less the engaged ones): a report
-- may still make them engaged, so the count says they may come. The clock
-- is the caller's, not the engine's now(), so the window is the snapshot's.
-- Page '' is the whole site (dim 'total'), whose open views are not
-- counted (0). Pages never seen are absent.
SELECT
    page,
    toUInt64(greatest(sum(engaged), 0)) AS views,
    toUInt64(greatest(sum(recent) - sum(recent_engaged), 0)) AS open
FROM
(
    SELECT value AS page,
        if(grain = 'day', arraySum(arrayMap((k, v) -> if(k >= {bucket:UInt8}, v, 0), mapKeys(engaged_hist), mapValues(engaged_hist))), 0) AS engaged,
        toInt64(0) AS recent,
        if(grain = 'hour', arraySum(arrayMap((k, v) -> if(k >= {bucket:UInt8}, v, 0), mapKeys(engaged_hist), mapValues(engaged_hist))), 0) AS recent_engaged
    FROM engagement_rollup
    WHERE site = {site:String} AND ((dim = 'page' AND value IN {pages:Array(String)}) OR (dim = 'total' AND value = '' AND has({pages:Array(String)}, '')))
      AND (grain = 'day' OR bucket >= {recent:DateTime})
    UNION ALL
    SELECT page, toInt64(0), toInt64(views), toInt64(0)
    FROM page_rollup
    WHERE site = {site:String} AND grain = 'hour' AND page IN {pages:Array(String)}
      AND bucket >= {recent:DateTime}
)
GROUP BY page
