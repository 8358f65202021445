-- stats_engagement_ranking: the values of one dimension of
-- engagement_rollup ranked by one of its sums over a range (whole UTC days
-- from the day grain, the edges from hours): entry pages by visits
-- ({dim} 'entry_page', {by} 'visits'), exit pages by exits ('exit_page',
-- 'exits'); then value; one page of rows from offset, each with the number
-- of values in the range. Each row also carries its value's bounces and
-- visit time (0 for exit pages, whose rows hold exits only): an entry
-- page's bounce rate and visit duration come from the rows its ranking
-- reads, in the same pass, where a second read of the ranked pages'
-- figures decoded every page's rows of the range again.
SELECT value, n, s_bounces, s_visit_ms, total_values
FROM
(
    SELECT
        value,
        toInt64(sum(if({by:String} = 'visits', visits, exits))) AS n,
        toInt64(sum(bounces)) AS s_bounces,
        toInt64(sum(visit_ms)) AS s_visit_ms,
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
