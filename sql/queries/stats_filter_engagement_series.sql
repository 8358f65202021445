-- stats_filter_engagement_series: stats_engagement_series for the views
-- whose value of a dimension passes a filter, read as
-- stats_filter_engagement reads a range.
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
      AND dim IN ({edim:String}, {vdim:String})
      AND (NOT {f_on:Bool} OR ((NOT {f_inon:Bool} OR value IN {f_in:Array(String)})
          AND value NOT IN {f_out:Array(String)}
          AND (empty({f_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(value, {f_has:Array(String)}))
          AND (empty({f_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(value, {f_hasnt:Array(String)}))))
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
