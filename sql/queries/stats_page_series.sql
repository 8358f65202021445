-- stats_page_series: stats_series for one page, from page_rollup (which
-- has the minute, hour and day grains per page).
SELECT
    toUnixTimestamp(if({daily:Bool}, toDateTime(toStartOfDay(bucket, {tz:String})), bucket)) AS t,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(uniques)) AS uniques
FROM page_rollup
WHERE site = {site:String} AND grain = {grain:String} AND page = {page:String}
  AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}
GROUP BY t
ORDER BY t
