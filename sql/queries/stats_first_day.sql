-- stats_first_day: the start of the first UTC day with a valid view of a
-- site (its 'total' day rows in dim_rollup; the key's prefix, so a few
-- granules), as Unix seconds, and the number of such days (0: none).
SELECT toUInt32(toUnixTimestamp(min(bucket))) AS t, count() AS days
FROM dim_rollup
WHERE site = {site:String} AND dim = 'total' AND page = '' AND grain = 'day'
