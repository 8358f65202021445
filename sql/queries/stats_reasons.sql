-- stats_reasons: rejected events per reason over a range and the period
-- before it (read as stats_total reads them; current = 1 for [from, to)),
-- for all pages (page '') or one page. A page's reason rows are hours
-- only: the caller passes dfrom = dto = from (and the same for the
-- previous period) for a page.
SELECT
    toUInt8(bucket >= {from:DateTime('UTC')}) AS current,
    value AS reason,
    toUInt64(sum(views)) AS events
FROM dim_rollup
WHERE site = {site:String} AND dim = 'reason' AND page = {page:String}
  AND ((grain = 'day' AND ((bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                        OR (bucket >= {pdfrom:DateTime('UTC')} AND bucket < {pdto:DateTime('UTC')})))
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')})
                         OR (bucket >= {pfrom:DateTime('UTC')} AND bucket < {pdfrom:DateTime('UTC')})
                         OR (bucket >= {pdto:DateTime('UTC')} AND bucket < {pto:DateTime('UTC')}))))
GROUP BY current, reason
ORDER BY current, reason
