-- stats_breakdown: valid views and merged uniques per value of one
-- dimension over a range (whole UTC days from the day grain, the edges
-- from hours, as in stats_total), sorted by views, then value; one page of
-- rows from offset. total_values counts every value in the range. With
-- value non-empty only that value is read (the page breakdown of one page).
--
-- Two steps, because merging sketches is what costs (about 25 µs per
-- HyperLogLog, thousands of them for a month of pages): the ranking sums
-- views alone, then only the returned values' sketches are merged. Their
-- day rows are contiguous (dim_rollup orders day rows by value first), so
-- the second step reads little. (top_value, not value: an alias would
-- shadow the column in WHERE.)
WITH top AS
(
    SELECT
        value AS top_value,
        toUInt64(sum(views)) AS top_views,
        toUInt64(count() OVER ()) AS total_values
    FROM dim_rollup
    WHERE site = {site:String} AND dim = {dim:String} AND page = {page:String}
      AND ({value:String} = '' OR value = {value:String})
      AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
    GROUP BY top_value
    ORDER BY top_views DESC, top_value
    LIMIT {limit:UInt32} OFFSET {offset:UInt32}
)
SELECT top_value, top_views, ifNull(u, 0), total_values
FROM top
LEFT JOIN
(
    SELECT value AS v, toUInt64(uniqCombined64Merge(12)(uniques)) AS u
    FROM dim_rollup
    WHERE site = {site:String} AND dim = {dim:String} AND page = {page:String}
      AND value IN (SELECT top_value FROM top)
      AND ((grain = 'day' AND if(grain = 'day', value, '') IN (SELECT top_value FROM top)
            AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
    GROUP BY v
) AS q ON q.v = top.top_value
ORDER BY top_views DESC, top_value
