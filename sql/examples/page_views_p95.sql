-- How are views spread over pages? Per UTC day: the pages viewed, and the
-- median, 95th percentile and maximum of their views. A p95 far above the
-- median means a few hot pages carry the site.
--
-- Reads page_rollup's day rows (a page's views per day); pages without a
-- view that day are not among them. quantileExact sorts the day's values
-- and takes the one at index floor(level × count), 0-based.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    day,
    count() AS pages,
    quantileExact(0.5)(day_views) AS p50,
    quantileExact(0.95)(day_views) AS p95,
    max(day_views) AS max_views,
    sum(day_views) AS views
FROM
(
    SELECT toDate(bucket) AS day, page, sum(views) AS day_views
    FROM page_rollup
    WHERE site = {site:String}
      AND grain = 'day'
      AND toDate(bucket) BETWEEN {from:Date} AND {to:Date}
    GROUP BY day, page
)
GROUP BY day
ORDER BY day
