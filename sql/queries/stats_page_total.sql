-- stats_page_total: valid views and merged uniques of one page over a
-- range and the period before it, one row per period (current = 1 for
-- [from, to)), read as stats_summary reads the site's: whole UTC days from
-- the day grain, the edges from hours. From dim_rollup's 'page' rows, the
-- rows the site's page ranking reads (stats_breakdown, _uniques), so a
-- page's tile and its row of the ranking are one reading: the same views,
-- and the same sketch (uniqCombined64(12)) where a page has too many views
-- for stats_page_exact. Day rows are ordered by value first, so the page's
-- are one slice.
SELECT
    toUInt8(bucket >= {from:DateTime('UTC')}) AS current,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim = 'page' AND page = '' AND value = {page:String}
  AND ((grain = 'day' AND if(grain = 'day', value, '') = {page:String}
        AND ((bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
          OR (bucket >= {pdfrom:DateTime('UTC')} AND bucket < {pdto:DateTime('UTC')})))
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')})
                         OR (bucket >= {pfrom:DateTime('UTC')} AND bucket < {pdfrom:DateTime('UTC')})
                         OR (bucket >= {pdto:DateTime('UTC')} AND bucket < {pto:DateTime('UTC')}))))
GROUP BY current
