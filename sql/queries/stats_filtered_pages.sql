-- stats_filtered_pages: the pages with the most rejected events over a
-- range (as stats_total reads it), with their events per reason. The top
-- pages come from the 'filtered_page' rows (one per page and bucket, so
-- the ranking reads few rows); their reasons from the per-page 'reason'
-- rows (hours only, migration 008) of just those pages. (top_page, not page: an alias shadows the
-- column of the same name in WHERE.)
WITH top AS
(
    SELECT value AS top_page, toUInt64(sum(views)) AS filtered
    FROM dim_rollup
    WHERE site = {site:String} AND dim = 'filtered_page' AND page = ''
      AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
    GROUP BY top_page
    ORDER BY filtered DESC, top_page
    LIMIT {limit:UInt32}
)
SELECT
    r.page AS page,
    any(top.filtered) AS filtered,
    r.value AS reason,
    toUInt64(sum(r.views)) AS events
FROM dim_rollup AS r
INNER JOIN top ON top.top_page = r.page
WHERE r.site = {site:String} AND r.dim = 'reason' AND r.page IN (SELECT top_page FROM top)
  AND r.grain = 'hour' AND r.bucket >= {from:DateTime('UTC')} AND r.bucket < {to:DateTime('UTC')}
GROUP BY page, reason
ORDER BY filtered DESC, page, events DESC, reason
