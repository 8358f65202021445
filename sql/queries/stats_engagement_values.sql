-- stats_engagement_values: the engagement and visit figures of some values
-- of one dimension of engagement_rollup ({dim}, {values}) over a range
-- (whole UTC days from the day grain, the edges from hours, as
-- stats_breakdown), for the rows of a breakdown: one row per value, part
-- and key, as stats_engagement (part 'engagements', 'engaged_ms',
-- 'visits', 'bounces', 'visit_ms', 'exits' with key 0; 'engaged_hist' and
-- 'scroll_hist' with the bucket).
-- Summed per value before the long form, as stats_engagement.
SELECT value, x.1 AS part, x.2 AS key, x.3 AS n
FROM
(
    SELECT
        value,
        toInt64(sum(engagements)) AS s_engagements,
        toInt64(sum(engaged_ms)) AS s_engaged_ms,
        toInt64(sum(visits)) AS s_visits,
        toInt64(sum(bounces)) AS s_bounces,
        toInt64(sum(visit_ms)) AS s_visit_ms,
        toInt64(sum(exits)) AS s_exits,
        sumMap(engaged_hist) AS s_engaged_hist,
        sumMap(scroll_hist) AS s_scroll_hist
    FROM engagement_rollup
    WHERE site = {site:String} AND dim = {dim:String} AND has({values:Array(String)}, value)
      AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
    GROUP BY value
)
ARRAY JOIN arrayConcat(
    [('engagements', toInt16(0), s_engagements), ('engaged_ms', toInt16(0), s_engaged_ms), ('visits', toInt16(0), s_visits),
     ('bounces', toInt16(0), s_bounces), ('visit_ms', toInt16(0), s_visit_ms), ('exits', toInt16(0), s_exits)],
    arrayMap((k, v) -> ('engaged_hist', toInt16(k), v), mapKeys(s_engaged_hist), mapValues(s_engaged_hist)),
    arrayMap((k, v) -> ('scroll_hist', toInt16(k), v), mapKeys(s_scroll_hist), mapValues(s_scroll_hist))) AS x
WHERE x.3 != 0
ORDER BY value, part, key
