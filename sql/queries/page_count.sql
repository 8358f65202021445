-- page_count: all-time valid views and unique visitors of one page.
-- Always returns one row (zeros for a page never seen).
SELECT
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(uniques)) AS uniques
FROM page_rollup
WHERE site = {site:String} AND grain = 'total' AND page = {page:String}
