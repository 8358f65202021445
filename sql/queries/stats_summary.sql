-- stats_summary: a site's summary in one read: valid views and merged
-- uniques (dim 'total', reason '') and rejected events per reason (dim
-- 'reason') over a range and the period before it: whole UTC days from
-- the day grain, the edges from hours; one row per period and reason
-- (current = 1 for [from, to)). One query, not the totals beside
-- stats_reasons: on a busy two-core host each query's fixed cost (parse,
-- plan, threads) was as much as its reads.
SELECT
    toUInt8(bucket >= {from:DateTime('UTC')}) AS current,
    if(dim = 'reason', value, '') AS reason,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64MergeIf(12)(uniques, dim = 'total')) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim IN ('total', 'reason') AND page = ''
  AND ((grain = 'day' AND ((bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                        OR (bucket >= {pdfrom:DateTime('UTC')} AND bucket < {pdto:DateTime('UTC')})))
    OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                         OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')})
                         OR (bucket >= {pfrom:DateTime('UTC')} AND bucket < {pdfrom:DateTime('UTC')})
                         OR (bucket >= {pdto:DateTime('UTC')} AND bucket < {pto:DateTime('UTC')}))))
GROUP BY current, reason
ORDER BY current, reason
