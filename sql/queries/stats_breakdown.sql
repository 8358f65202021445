-- stats_breakdown: the ranking of one dimension's values by valid views
-- over a range (whole UTC days from the day grain, the edges from hours,
-- as in stats_total), for all pages (page '') or one; sorted by views, then
-- value; one page of rows from offset, each with the number of values in
-- the range. With value non-empty only that value is read (the page
-- breakdown of one page). Views only: the returned values' uniques are
-- stats_breakdown_uniques, so a month of a thousand pages merges ten
-- values' sketches, not a thousand (merging is what costs).
SELECT value, views, total_values
FROM
(
    SELECT
        value,
        toUInt64(sum(views)) AS views,
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
