-- Top pages of a site over the last 24 hours.
--
-- Reads the hourly rollup (25 buckets per page at most), never views_raw.
-- Rollup rows are merged in the background, so aggregate again here:
-- sum the views, merge the uniques sketches.
--
-- Parameters: {site:String}, e.g. 'example.com'.
SELECT
    page,
    sum(views) AS views,
    uniqCombined64Merge(uniques) AS uniques
FROM page_hour
WHERE site = {site:String}
  AND bucket >= toStartOfHour(now('UTC') - INTERVAL 24 HOUR)
GROUP BY page
ORDER BY views DESC, page
LIMIT 20
