-- stats_reasons: rejected events per reason over a range (as stats_total
-- reads it), for all pages (page '') or one page. A page's reason rows are
-- hours only: the caller passes dfrom = dto = from for a page.
SELECT
    value AS reason,
    toUInt64(sum(views)) AS events
FROM dim_rollup
WHERE site = {site:String} AND dim = 'reason' AND page = {page:String}
  AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
GROUP BY reason
ORDER BY reason
