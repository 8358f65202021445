-- When is the site visited? Valid views and unique visitors per weekday
-- (1 = Monday) and hour of the day in a time zone: a heat map's cells.
--
-- Reads dim_rollup's hour rows of dim 'total' (the site's valid views and
-- visitor sketch per UTC hour): hours are whole in every zone with
-- whole-hour offsets. A cell's visitors are the merge of its hours over
-- the weeks of the range. Cells without views are left out.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included), {tz:String} (an IANA zone, e.g. 'UTC', 'Europe/Berlin').
SELECT
    toDayOfWeek(bucket, 0, {tz:String}) AS weekday,
    toHour(toTimeZone(bucket, {tz:String})) AS hour,
    sum(views) AS views,
    uniqCombined64Merge(12)(uniques) AS visitors
FROM dim_rollup
WHERE site = {site:String}
  AND dim = 'total'
  AND page = ''
  AND grain = 'hour'
  AND toDate(bucket) BETWEEN {from:Date} AND {to:Date}
GROUP BY weekday, hour
ORDER BY weekday, hour
