-- stats_page_total: valid views and merged uniques of one page over a
-- range and the period before it, from page_rollup (migration 004), read
-- as stats_summary reads dim_rollup: one row per period (current = 1 for
-- [from, to)), whole UTC days from the day grain, the edges from hours.
SELECT
    toUInt8(bucket >= {from:DateTime('UTC')}) AS current,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(uniques)) AS uniques
FROM page_rollup
WHERE site = {site:String} AND page = {page:String}
  AND ((grain = 'day' AND ((bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                        OR (bucket >= {pdfrom:DateTime('UTC')} AND bucket < {pdto:DateTime('UTC')})))
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')})
                         OR (bucket >= {pfrom:DateTime('UTC')} AND bucket < {pdfrom:DateTime('UTC')})
                         OR (bucket >= {pdto:DateTime('UTC')} AND bucket < {pto:DateTime('UTC')}))))
GROUP BY current
