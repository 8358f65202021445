-- page_views_fill: copies one month ({month:UInt32}, YYYYMM, a views_raw
-- partition) of views_raw's valid views into the staging table, from
-- {cutoff} on. The SELECT is page_views_mv's (migration 021, 011's) with only the
-- month and the cutoff added, so the rebuilt rows are the rows the
-- materialized view would have written. (Its time is the second of the
-- event; a day's or a month's bounds fall on whole seconds, so they select
-- the same rows whether read from views_raw's milliseconds or not.)
INSERT INTO page_views_rebuild
SETTINGS insert_deduplicate = 0
SELECT site, page, toDateTime(time, 'UTC') AS time, visitor,
    ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen
FROM views_raw
WHERE verdict = 'valid' AND kind = 0 AND toYYYYMM(time) = {month:UInt32} AND time >= {cutoff:DateTime('UTC')}
  AND batch <= {fed:Map(UInt16, UInt64)}[partition]
  AND ({site:String} = '' OR site = {site:String}) AND time < {to:DateTime('UTC')}
