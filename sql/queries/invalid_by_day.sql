-- invalid_by_day: events of a site by UTC day and verdict (valid included,
-- so a report can state shares), for the invalid-traffic report. Reads
-- dim_rollup's hour rows (migration 008) in [from, to), which the report
-- widens to whole UTC hours: the site's valid views (dim 'total') and its
-- rejected events by reason (dim 'reason', the site's rows: page ''). Its
-- sorting key (site, dim, page, grain, …, bucket) makes each a single
-- range; a year is some 9,000 rows of each.
SELECT
    toString(toDate(bucket, 'UTC')) AS day,
    if(dim = 'total', 'valid', value) AS verdict,
    toUInt64(sum(views)) AS events
FROM dim_rollup
WHERE site = {site:String}
  AND dim IN ('total', 'reason')
  AND page = ''
  AND grain = 'hour'
  AND bucket >= {from:DateTime64(3, 'UTC')}
  AND bucket < {to:DateTime64(3, 'UTC')}
GROUP BY day, verdict
ORDER BY day, verdict
