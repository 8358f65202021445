-- stats_breakdown_uniques: merged uniques of some values of one dimension
-- over a range (read as stats_breakdown reads it). dim_rollup orders day
-- rows by value first, so the day rows of these values are a few slices of
-- the index, whatever the number of other values.
SELECT
    value,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim = {dim:String} AND page = {page:String}
  AND value IN {values:Array(String)}
  AND ((grain = 'day' AND if(grain = 'day', value, '') IN {values:Array(String)}
        AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
GROUP BY value
