-- stats_reason_series: rejected events per bucket and reason from one
-- grain (hour, or day for a UTC site's days; a page's rows are hours only)
-- in [from, to) for all pages (page '') or one, grouped by bucket or
-- (daily = 1) by the day the hour starts in the site's zone tz, as
-- stats_series does. t is Unix seconds.
SELECT
    toUnixTimestamp(if({daily:Bool}, toDateTime(toStartOfDay(bucket, {tz:String})), bucket)) AS t,
    value AS reason,
    toUInt64(sum(views)) AS events
FROM dim_rollup
WHERE site = {site:String} AND dim = 'reason' AND page = {page:String} AND grain = {grain:String}
  AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}
GROUP BY t, reason
ORDER BY t, reason
