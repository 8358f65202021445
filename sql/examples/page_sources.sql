-- Where did one page's viewers come from? Valid views and distinct
-- visitors of the page per grouped source and referring host.
--
-- Reads page_views, ordered by (site, page, time): the page's own rows of
-- the range and nothing else. dim_rollup keeps sources per site, not per
-- page.
--
-- Parameters: {site:String}, {page:String}, {from:Date}, {to:Date} (UTC
-- days, both included).
SELECT
    ref_source AS source,
    ref_host AS host,
    count() AS views,
    uniqExact(visitor) AS visitors
FROM page_views
WHERE site = {site:String}
  AND page = {page:String}
  AND toDate(time) BETWEEN {from:Date} AND {to:Date}
GROUP BY source, host
ORDER BY views DESC, source, host
LIMIT 50
