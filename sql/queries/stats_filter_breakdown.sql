-- stats_filter_breakdown: stats_breakdown of the site's values of {dim}
-- that pass a filter (the f_ parameters, as stats_filter_total): the
-- ranking by valid views over a range, one page of rows from offset, each
-- with the number of passing values. Views only: the returned values'
-- uniques are stats_breakdown_uniques, as for the unfiltered ranking.
SELECT value, views, total_values
FROM
(
    SELECT
        value,
        toUInt64(sum(views)) AS views,
        toUInt64(count() OVER ()) AS total_values
    FROM dim_rollup
    WHERE site = {site:String} AND dim = {dim:String} AND page = ''
      AND (NOT {f_on:Bool} OR ((NOT {f_inon:Bool} OR value IN {f_in:Array(String)})
          AND value NOT IN {f_out:Array(String)}
          AND (empty({f_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(value, {f_has:Array(String)}))
          AND (empty({f_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(value, {f_hasnt:Array(String)}))))
      AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
    GROUP BY value
)
ORDER BY views DESC, value
LIMIT {limit:UInt32} OFFSET {offset:UInt32}
