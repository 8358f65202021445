-- How did one page do hour by hour? Its views and uniques per UTC hour,
-- for a chart.
--
-- Reads page_rollup's hour rows (one per page and UTC hour), never
-- views_raw. WITH FILL adds the hours without views as zeros, so the
-- series has every hour of the range.
--
-- Parameters: {site:String}, {page:String} (a normalised path, e.g.
-- '/blog/post'), {from:Date}, {to:Date} (UTC days, both included).
SELECT
    bucket AS hour,
    sum(views) AS views,
    uniqCombined64Merge(uniques) AS uniques
FROM page_rollup
WHERE site = {site:String}
  AND grain = 'hour'
  AND page = {page:String}
  AND toDate(bucket) BETWEEN {from:Date} AND {to:Date}
GROUP BY hour
ORDER BY hour WITH FILL FROM toDateTime({from:Date}, 'UTC') TO toDateTime({to:Date} + 1, 'UTC') STEP INTERVAL 1 HOUR
