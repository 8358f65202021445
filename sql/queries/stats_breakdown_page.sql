-- stats_breakdown_page: one page's ranking of one dimension's values by
-- valid views over [from, to), each with its visitors' uniques; sorted by
-- views, then value; one page of rows from offset, each with the number of
-- values in the range. Read from page_views (migration 011): the page's
-- views of the range, grouped by {column} (one of its dimension columns).
-- Uniques follow the page's own rule (api/stats, pageUniques): a value
-- with fewer than {exact} views is counted exactly (uniqCombined64 at
-- precision 17 is an exact set below 4096 ids), one with more by
-- uniqCombined64(12), the estimator dim_rollup's sketches use; so a value
-- that holds all of the page's views reads what the page's tile reads.
SELECT value, views, uniques, total_values
FROM
(
    SELECT
        toString({column:Identifier}) AS value,
        count() AS views,
        toUInt64(if(views < {exact:UInt64}, uniqCombined64(visitor), uniqCombined64(12)(visitor))) AS uniques,
        toUInt64(count() OVER ()) AS total_values
    FROM page_views
    WHERE site = {site:String} AND page = {page:String}
      AND time >= {from:DateTime('UTC')} AND time < {to:DateTime('UTC')}
    GROUP BY value
)
ORDER BY views DESC, value
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
