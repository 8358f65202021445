-- Where do the visitors come from? Valid views and unique visitors per
-- grouped source ('Google', 'Reddit', '(direct)', else the referring
-- host), with each source's share of the site's views.
--
-- Reads dim_rollup's day rows of dim 'source' (one per source and day):
-- every valid view has exactly one source, so the shares add up to 1.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    source,
    views,
    visitors,
    round(views / sum(views) OVER (), 4) AS share
FROM
(
    SELECT
        value AS source,
        sum(views) AS views,
        uniqCombined64Merge(12)(uniques) AS visitors
    FROM dim_rollup
    WHERE site = {site:String}
      AND dim = 'source'
      AND page = ''
      AND grain = 'day'
      AND toDate(bucket) BETWEEN {from:Date} AND {to:Date}
    GROUP BY source
)
ORDER BY views DESC, source
LIMIT 50
