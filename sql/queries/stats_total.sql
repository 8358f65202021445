-- stats_total: valid views and merged uniques of a site (dim 'total') or of
-- one value of a breakdown (e.g. dim 'page', value '/x', page '') over a
-- range, from dim_rollup (migration 008). The range is read as whole UTC
-- days [dfrom, dto) from the day grain plus the hours [from, dfrom) and
-- [dto, to) from the hour grain: sums add and sketches merge as unions, so
-- the result is exact for any hour-aligned range. With no whole day inside,
-- dfrom = dto = from and everything comes from hours.
SELECT
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim = {dim:String} AND page = {page:String} AND value = {value:String}
  AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
