-- How did each day go? Valid views, unique visitors, filtered (rejected)
-- events and the filtered share of all events, per UTC day.
--
-- Reads dim_rollup's day rows of the site: dim 'total' (valid views and
-- the visitor sketch, uniqCombined64(12)) and dim 'reason' (rejected
-- events per reason), a few rows per day however busy the site is.
-- Days without any event are left out.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    day,
    valid,
    visitors,
    filtered,
    round(filtered / (valid + filtered), 4) AS filtered_share
FROM
(
    SELECT
        toDate(bucket) AS day,
        sumIf(views, dim = 'total') AS valid,
        uniqCombined64MergeIf(12)(uniques, dim = 'total') AS visitors,
        sumIf(views, dim = 'reason') AS filtered
    FROM dim_rollup
    WHERE site = {site:String}
      AND dim IN ('total', 'reason')
      AND page = ''
      AND grain = 'day'
      AND toDate(bucket) BETWEEN {from:Date} AND {to:Date}
    GROUP BY day
)
ORDER BY day
