-- stats_engagement_ranking: the values of one dimension of
-- engagement_rollup ranked by one of its sums over a range (whole UTC days
-- from the day grain, the edges from hours): entry pages by visits
-- ({dim} 'entry_page', {by} 'visits'), exit pages by exits ('exit_page',
-- 'exits'); then value; one page of rows from offset, each with the number
-- of values in the range.
SELECT value, n, total_values
FROM
(
    SELECT
        value,
        toInt64(sum(if({by:String} = 'visits', visits, exits))) AS n,
        toUInt64(count() OVER ()) AS total_values
    FROM engagement_rollup
    WHERE site = {site:String} AND dim = {dim:String}
      AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
    GROUP BY value
    HAVING n > 0
)
ORDER BY n DESC, value
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
