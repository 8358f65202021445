-- Which pages had the most unique visitors over a month?
--
-- Reads page_rollup's day rows: one row per page and UTC day (more while
-- not yet merged) with the views and a uniqCombined64 sketch of the
-- visitor ids. Uniques over the range are the day sketches merged
-- (uniqCombined64Merge), never summed: a visitor id seen on several days
-- counts once. Visitor ids rotate daily, so a person who returns on
-- another day counts again (sql/README.md).
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included), e.g. param_from=2026-03-01 param_to=2026-03-31.
SELECT
    page,
    uniqCombined64Merge(uniques) AS uniques,
    sum(views) AS views
FROM page_rollup
WHERE site = {site:String}
  AND grain = 'day'
  AND toDate(bucket) BETWEEN {from:Date} AND {to:Date}
GROUP BY page
ORDER BY uniques DESC, views DESC, page
LIMIT 20
