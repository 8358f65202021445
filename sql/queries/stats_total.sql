-- stats_total: valid views and merged uniques of a site (dim 'total') or of
-- one value of a breakdown (e.g. dim 'page', value '/x', page '') over a
-- range and the period before it, from dim_rollup (migration 008): one row
-- per period, current = 1 for [from, to), 0 for [pfrom, from); a period
-- without views has no row.
--
-- A range is read as whole UTC days [dfrom, dto) from the day grain plus
-- the hours [from, dfrom) and [dto, to) from the hour grain: sums add and
-- sketches merge as unions, so the result is exact for any hour-aligned
-- range. With no whole day inside, dfrom = dto = from and everything comes
-- from hours. The previous period's bounds are the p-prefixed ones; every
-- one of its buckets lies before from, every current one at or after.
SELECT
    toUInt8(bucket >= {from:DateTime('UTC')}) AS current,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim = {dim:String} AND page = {page:String} AND value = {value:String}
  AND ((grain = 'day' AND ((bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                        OR (bucket >= {pdfrom:DateTime('UTC')} AND bucket < {pdto:DateTime('UTC')})))
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')})
                         OR (bucket >= {pfrom:DateTime('UTC')} AND bucket < {pdfrom:DateTime('UTC')})
                         OR (bucket >= {pdto:DateTime('UTC')} AND bucket < {pto:DateTime('UTC')}))))
GROUP BY current
