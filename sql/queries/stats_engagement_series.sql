-- stats_engagement_series: a site's (or a page's) engagement and visit
-- figures per bucket, from engagement_rollup's rows of one grain (hour or
-- day: it keeps no minutes) in [from, to), as stats_series reads
-- dim_rollup: with daily = 1 the hours are grouped by the day they start
-- in the site's zone tz. Engagement figures from dim {edim} value
-- {evalue}, visit figures from {vdim} {vvalue}, as stats_engagement. t
-- is the bucket's start as Unix seconds; one row per bucket, part and key
-- (part 'visits', 'bounces', 'visit_ms', 'engagements', 'engaged_ms' with
-- key 0; 'engaged_hist' and 'scroll_hist' with the bucket index); zero
-- sums and empty buckets are absent.
SELECT
    toUnixTimestamp(if({daily:Bool}, toDateTime(toStartOfDay(bucket, {tz:String})), bucket)) AS t,
    x.1 AS part,
    x.2 AS key,
    toInt64(sum(x.3)) AS n
FROM engagement_rollup
ARRAY JOIN arrayConcat(
    if(dim = {edim:String}, [('engagements', toInt16(0), engagements), ('engaged_ms', toInt16(0), engaged_ms)], []),
    if(dim = {vdim:String}, [('visits', toInt16(0), visits), ('bounces', toInt16(0), bounces), ('visit_ms', toInt16(0), visit_ms)], []),
    if(dim = {edim:String}, arrayMap((k, v) -> ('engaged_hist', toInt16(k), v), mapKeys(engaged_hist), mapValues(engaged_hist)), []),
    if(dim = {edim:String}, arrayMap((k, v) -> ('scroll_hist', toInt16(k), v), mapKeys(scroll_hist), mapValues(scroll_hist)), [])) AS x
WHERE site = {site:String} AND grain = {grain:String}
  AND ((dim = {edim:String} AND value = {evalue:String}) OR (dim = {vdim:String} AND value = {vvalue:String}))
  AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}
  AND x.3 != 0
GROUP BY t, part, key
ORDER BY t, part, key
