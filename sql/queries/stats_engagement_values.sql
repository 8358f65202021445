-- stats_engagement_values: the engagement and visit figures of some values
-- of one dimension of engagement_rollup ({dim}, {values}) over a range
-- (whole UTC days from the day grain, the edges from hours, as
-- stats_breakdown), for the rows of a breakdown: one row per value, part
-- and key, as stats_engagement (part 'engagements', 'engaged_ms',
-- 'visits', 'bounces', 'visit_ms', 'exits' with key 0; 'engaged_hist' and
-- 'scroll_hist' with the bucket).
SELECT
    value,
    x.1 AS part,
    x.2 AS key,
    toInt64(sum(x.3)) AS n
FROM engagement_rollup
ARRAY JOIN arrayConcat(
    [('engagements', toInt16(0), engagements), ('engaged_ms', toInt16(0), engaged_ms), ('visits', toInt16(0), visits),
     ('bounces', toInt16(0), bounces), ('visit_ms', toInt16(0), visit_ms), ('exits', toInt16(0), exits)],
    arrayMap((k, v) -> ('engaged_hist', toInt16(k), v), mapKeys(engaged_hist), mapValues(engaged_hist)),
    arrayMap((k, v) -> ('scroll_hist', toInt16(k), v), mapKeys(scroll_hist), mapValues(scroll_hist))) AS x
WHERE site = {site:String} AND dim = {dim:String} AND has({values:Array(String)}, value)
  AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
  AND x.3 != 0
GROUP BY value, part, key
ORDER BY value, part, key
