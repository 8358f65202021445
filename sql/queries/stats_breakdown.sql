-- stats_breakdown: valid views and merged uniques per value of one
-- dimension over a range (whole UTC days from the day grain, the edges
-- from hours, as in stats_total), for all pages (page '') or one page;
-- sorted by views, then value; one page of rows from offset. total_values
-- counts every value in the range. With value non-empty only that value is
-- read (the breakdown by page of one page).
SELECT value, views, uniques, total_values
FROM
(
    SELECT
        value,
        toUInt64(sum(views)) AS views,
        toUInt64(uniqCombined64Merge(14)(uniques)) AS uniques,
        toUInt64(count() OVER ()) AS total_values
    FROM dim_rollup
    WHERE site = {site:String} AND dim = {dim:String} AND page = {page:String}
      AND ({value:String} = '' OR value = {value:String})
      AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
    GROUP BY value
)
ORDER BY views DESC, value
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
