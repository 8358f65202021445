-- stats_breakdown_page: one page's ranking of one dimension's values by
-- valid views over a range (read as stats_breakdown reads it), with each
-- value's merged uniques; sorted by views, then value; one page of rows
-- from offset, each with the number of values in the range. Read from the
-- page's dim 'page_dims' rows (migration 010): a row per combination of
-- every dimension, joined with \x1f in the order source, referrer,
-- utm_source, utm_medium, utm_campaign, browser, os, device, country,
-- screen; field is the wanted one's position (1-based). One page's
-- combinations are few next to a site's, so views and uniques are read at
-- once.
SELECT value, views, uniques, total_values
FROM
(
    SELECT
        splitByChar('\x1f', value)[{field:UInt8}] AS value,
        toUInt64(sum(views)) AS views,
        toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques,
        toUInt64(count() OVER ()) AS total_values
    FROM dim_rollup
    WHERE site = {site:String} AND dim = 'page_dims' AND page = {page:String}
      AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
    GROUP BY value
)
ORDER BY views DESC, value
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
