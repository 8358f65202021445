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
-- Summed per bucket and dimension before the long form, as
-- stats_engagement.
SELECT t, x.1 AS part, x.2 AS key, x.3 AS n
FROM
(
    SELECT
        toUnixTimestamp(if({daily:Bool}, toDateTime(toStartOfDay(bucket, {tz:String})), bucket)) AS t,
        dim,
        toInt64(sum(engagements)) AS s_engagements,
        toInt64(sum(engaged_ms)) AS s_engaged_ms,
        toInt64(sum(visits)) AS s_visits,
        toInt64(sum(bounces)) AS s_bounces,
        toInt64(sum(visit_ms)) AS s_visit_ms,
        sumMap(engaged_hist) AS s_engaged_hist,
        sumMap(scroll_hist) AS s_scroll_hist
    FROM engagement_rollup
    WHERE site = {site:String} AND grain = {grain:String}
      AND ((dim = {edim:String} AND value = {evalue:String}) OR (dim = {vdim:String} AND value = {vvalue:String}))
      AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}
    GROUP BY t, dim
)
ARRAY JOIN arrayConcat(
    if(dim = {edim:String}, [('engagements', toInt16(0), s_engagements), ('engaged_ms', toInt16(0), s_engaged_ms)], []),
    if(dim = {vdim:String}, [('visits', toInt16(0), s_visits), ('bounces', toInt16(0), s_bounces), ('visit_ms', toInt16(0), s_visit_ms)], []),
    if(dim = {edim:String}, arrayMap((k, v) -> ('engaged_hist', toInt16(k), v), mapKeys(s_engaged_hist), mapValues(s_engaged_hist)), []),
    if(dim = {edim:String}, arrayMap((k, v) -> ('scroll_hist', toInt16(k), v), mapKeys(s_scroll_hist), mapValues(s_scroll_hist)), [])) AS x
WHERE x.3 != 0
ORDER BY t, part, key
