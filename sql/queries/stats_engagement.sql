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
-- The rows are summed per period and dimension before they are turned into
-- the long form: exploding every stored row's histograms first cost a
-- page's summary more than reading them (docs/benchmarks, "Stats API").
SELECT current, x.1 AS part, x.2 AS key, x.3 AS n
FROM
(
    SELECT
        toUInt8(bucket >= {from:DateTime('UTC')}) AS current,
        dim,
        toInt64(sum(engagements)) AS s_engagements,
        toInt64(sum(engaged_ms)) AS s_engaged_ms,
        toInt64(sum(visits)) AS s_visits,
        toInt64(sum(bounces)) AS s_bounces,
        toInt64(sum(visit_ms)) AS s_visit_ms,
        sumMap(engaged_hist) AS s_engaged_hist,
        sumMap(scroll_hist) AS s_scroll_hist
    FROM engagement_rollup
    WHERE site = {site:String}
      AND ((dim = {edim:String} AND value = {evalue:String}) OR (dim = {vdim:String} AND value = {vvalue:String}))
      AND ((grain = 'day' AND ((bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                            OR (bucket >= {pdfrom:DateTime('UTC')} AND bucket < {pdto:DateTime('UTC')})))
        OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                             OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')})
                             OR (bucket >= {pfrom:DateTime('UTC')} AND bucket < {pdfrom:DateTime('UTC')})
                             OR (bucket >= {pdto:DateTime('UTC')} AND bucket < {pto:DateTime('UTC')}))))
    GROUP BY current, dim
)
ARRAY JOIN arrayConcat(
    if(dim = {edim:String}, [('engagements', toInt16(0), s_engagements), ('engaged_ms', toInt16(0), s_engaged_ms)], []),
    if(dim = {vdim:String}, [('visits', toInt16(0), s_visits), ('bounces', toInt16(0), s_bounces), ('visit_ms', toInt16(0), s_visit_ms)], []),
    if(dim = {edim:String}, arrayMap((k, v) -> ('engaged_hist', toInt16(k), v), mapKeys(s_engaged_hist), mapValues(s_engaged_hist)), []),
    if(dim = {edim:String}, arrayMap((k, v) -> ('scroll_hist', toInt16(k), v), mapKeys(s_scroll_hist), mapValues(s_scroll_hist)), [])) AS x
ORDER BY current, part, key
