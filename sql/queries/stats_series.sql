-- stats_series: a site's valid views and merged uniques per bucket, from
-- dim_rollup's 'total' rows of one grain (minute or hour) in [from, to).
-- With daily = 1 the hours are grouped by the day they start in the site's
-- zone tz, so day buckets follow the zone (DST days have 23 or 25 hours).
-- t is the bucket's start as Unix seconds. Empty buckets are absent.
SELECT
    toUnixTimestamp(if({daily:Bool}, toDateTime(toStartOfDay(bucket, {tz:String})), bucket)) AS t,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim = 'total' AND page = '' AND grain = {grain:String}
  AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}
GROUP BY t
ORDER BY t
