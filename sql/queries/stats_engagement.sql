-- stats_engagement: a site's (or a page's) engagement and visit figures
-- over a range and the period before it, from engagement_rollup (migration
-- 021): whole UTC days from the day grain, the edges from hours, as
-- stats_summary. Engagement figures are read from dim {edim} value
-- {evalue} ('total' '' for the site, 'page' and the page for a page),
-- visit figures from {vdim} {vvalue} ('total' '', or 'entry_page' and the
-- page: the visits that entered there). One row per period, part and key:
-- part 'engagements', 'engaged_ms', 'visits', 'bounces', 'visit_ms' (key
-- 0), 'engaged_hist' and 'scroll_hist' (key = the bucket). Rows are summed
-- unmerged: every column is a sum, so a merge changes nothing of the total.
SELECT
    toUInt8(bucket >= {from:DateTime('UTC')}) AS current,
    x.1 AS part,
    x.2 AS key,
    toInt64(sum(x.3)) AS n
FROM engagement_rollup
ARRAY JOIN arrayConcat(
    if(dim = {edim:String}, [('engagements', toInt16(0), engagements), ('engaged_ms', toInt16(0), engaged_ms)], []),
    if(dim = {vdim:String}, [('visits', toInt16(0), visits), ('bounces', toInt16(0), bounces), ('visit_ms', toInt16(0), visit_ms)], []),
    if(dim = {edim:String}, arrayMap((k, v) -> ('engaged_hist', toInt16(k), v), mapKeys(engaged_hist), mapValues(engaged_hist)), []),
    if(dim = {edim:String}, arrayMap((k, v) -> ('scroll_hist', toInt16(k), v), mapKeys(scroll_hist), mapValues(scroll_hist)), [])) AS x
WHERE site = {site:String}
  AND ((dim = {edim:String} AND value = {evalue:String}) OR (dim = {vdim:String} AND value = {vvalue:String}))
  AND ((grain = 'day' AND ((bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                        OR (bucket >= {pdfrom:DateTime('UTC')} AND bucket < {pdto:DateTime('UTC')})))
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')})
                         OR (bucket >= {pfrom:DateTime('UTC')} AND bucket < {pdfrom:DateTime('UTC')})
                         OR (bucket >= {pdto:DateTime('UTC')} AND bucket < {pto:DateTime('UTC')}))))
GROUP BY current, part, key
ORDER BY current, part, key
