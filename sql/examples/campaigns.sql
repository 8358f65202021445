-- Which campaigns bring visitors? Valid views, distinct visitors and
-- pages per combination of utm_source, utm_medium and utm_campaign.
--
-- Reads page_views (one row per valid view with its dimensions, kept as
-- long as views_raw): dim_rollup keeps each UTM tag on its own, so only
-- the views themselves have the three together. Views without any tag
-- are left out.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    utm_source,
    utm_medium,
    utm_campaign,
    count() AS views,
    uniqExact(visitor) AS visitors,
    uniqExact(page) AS pages
FROM page_views
WHERE site = {site:String}
  AND toDate(time) BETWEEN {from:Date} AND {to:Date}
  AND (utm_source != '' OR utm_medium != '' OR utm_campaign != '')
GROUP BY utm_source, utm_medium, utm_campaign
ORDER BY views DESC, utm_source, utm_medium, utm_campaign
LIMIT 50
