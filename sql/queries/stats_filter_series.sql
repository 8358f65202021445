-- stats_filter_series: stats_series for the views whose value of {dim}
-- passes a filter (the f_ parameters, as stats_filter_total): valid views
-- and merged uniques per bucket from dim_rollup's rows of one grain (hour
-- or day: dimensions have no minute rows) in [from, to); with daily = 1
-- the hours are grouped by the day they start in the site's zone tz. t is
-- the bucket's start as Unix seconds. Empty buckets are absent.
SELECT
    toUnixTimestamp(if({daily:Bool}, toDateTime(toStartOfDay(bucket, {tz:String})), bucket)) AS t,
    toUInt64(sum(views)) AS views,
    toUInt64(uniqCombined64Merge(12)(uniques)) AS uniques
FROM dim_rollup
WHERE site = {site:String} AND dim = {dim:String} AND page = '' AND grain = {grain:String}
  AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}
  AND (NOT {f_on:Bool} OR ((NOT {f_inon:Bool} OR value IN {f_in:Array(String)})
      AND value NOT IN {f_out:Array(String)}
      AND (empty({f_has:Array(String)}) OR multiSearchAnyCaseInsensitiveUTF8(value, {f_has:Array(String)}))
      AND (empty({f_hasnt:Array(String)}) OR NOT multiSearchAnyCaseInsensitiveUTF8(value, {f_hasnt:Array(String)}))))
GROUP BY t
ORDER BY t
