-- stats_realtime: valid views and distinct visitors of a site since from
-- (a minute boundary), from dim_rollup's minute grain.
SELECT
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS visitors
FROM dim_rollup
WHERE site = {site:String} AND dim = 'total' AND page = '' AND grain = 'minute'
  AND bucket >= {from:DateTime('UTC')}
