-- Hourly views and uniques of one page over the last 7 days, for a chart.
--
-- WITH FILL adds the hours without views, so the series has no gaps.
--
-- Parameters: {site:String}, {page:String}, e.g. '/blog/post'.
SELECT
    bucket AS hour,
    sum(views) AS views,
    uniqCombined64Merge(uniques) AS uniques
FROM page_hour
WHERE site = {site:String}
  AND page = {page:String}
  AND bucket >= toStartOfHour(now('UTC') - INTERVAL 7 DAY)
GROUP BY hour
ORDER BY hour WITH FILL STEP INTERVAL 1 HOUR
