-- page_rollup_fill: recounts one month ({month:UInt32}, YYYYMM, a views_raw
-- partition) of views_raw into the staging table, from {cutoff} on. The
-- SELECT is page_rollup_mv's (migration 021, 004's), so the rebuilt rows are the
-- rows the materialized view would have written, less the all-time rows
-- (page_rollup_totals merges them from the day rows at the end). With
-- {site} (not '') only that site's views before {to} are recounted: a
-- revalidation's range. A month at a time keeps
-- the aggregation's memory bounded and lets the rebuild report progress;
-- the all-time rows of different months are merged like any others.
INSERT INTO page_rollup_rebuild
SETTINGS insert_deduplicate = 0
SELECT
    g.1 AS grain,
    site,
    page,
    g.2 AS bucket,
    count() AS views,
    uniqCombined64State(visitor) AS uniques
FROM views_raw
ARRAY JOIN [
    (1, toStartOfMinute(toDateTime(time, 'UTC'))),
    (2, toStartOfHour(toDateTime(time, 'UTC'))),
    (3, toStartOfDay(toDateTime(time, 'UTC')))
] AS g
WHERE verdict = 'valid' AND kind = 0 AND toYYYYMM(time) = {month:UInt32} AND time >= {cutoff:DateTime('UTC')}
  AND batch <= {fed:Map(UInt16, UInt64)}[partition]
  AND ({site:String} = '' OR site = {site:String}) AND time < {to:DateTime('UTC')}
GROUP BY grain, site, page, bucket
