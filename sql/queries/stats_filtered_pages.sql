-- stats_filtered_pages: the pages with the most rejected events over a
-- range (as stats_breakdown reads it): page, filtered; the most first.
-- Read from the 'filtered_page' rows (one per page and bucket, so the
-- ranking reads few rows). Their reasons are stats_filtered_reasons'.
-- (top_page, not page: an alias shadows the column of the same name in
-- WHERE.)
SELECT value AS top_page, toUInt64(sum(views)) AS filtered
FROM dim_rollup
WHERE site = {site:String} AND dim = 'filtered_page' AND page = ''
  AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
GROUP BY top_page
ORDER BY filtered DESC, top_page
LIMIT {limit:UInt32}
