-- stats_page_total: valid views and merged uniques of one page over a
-- range, from page_rollup (migration 004), read as stats_total reads
-- dim_rollup: whole UTC days from the day grain, the edges from hours.
SELECT
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(uniques)) AS uniques
FROM page_rollup
WHERE site = {site:String} AND page = {page:String}
  AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
