-- Which sites link here? Valid views and unique visitors per referring
-- host, most first; views without an outside referrer (direct visits,
-- links within the site) are the '(none)' row.
--
-- Reads dim_rollup's day rows of dim 'referrer' (one per host and day).
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    if(value = '', '(none)', value) AS host,
    sum(views) AS views,
    uniqCombined64Merge(12)(uniques) AS visitors
FROM dim_rollup
WHERE site = {site:String}
  AND dim = 'referrer'
  AND page = ''
  AND grain = 'day'
  AND toDate(bucket) BETWEEN {from:Date} AND {to:Date}
GROUP BY host
ORDER BY views DESC, host
LIMIT 50
