-- site_count: all-time valid views and unique visitors of a whole site.
-- uniques merges the per-page sketches, so a visitor of many pages counts once.
SELECT
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(uniques)) AS uniques
FROM page_rollup
WHERE site = {site:String} AND grain = 'total'
