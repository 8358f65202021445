-- page_counts: all-time valid views and unique visitors of many pages of one
-- site at once, for the api's snapshot refresh. Pages never seen are absent.
SELECT
    page,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(uniques)) AS uniques
FROM page_rollup
WHERE site = {site:String} AND grain = 'total' AND page IN {pages:Array(String)}
GROUP BY page
