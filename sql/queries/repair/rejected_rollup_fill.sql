-- rejected_rollup_fill: recounts one month ({month:UInt32}, YYYYMM, a
-- views_raw partition) of views_raw's rejected events into the staging
-- table, from {cutoff} on. The SELECT is rejected_rollup_mv's (migrations
-- 019 and 021) with only the month, the cutoff, the feed's progress and the scope
-- added, so the rebuilt rows are the rows the materialized view would have
-- written: the view runs per feed, this per month, and the engine merges
-- the rows of one key from different inserts (events add, last is the
-- latest).
INSERT INTO rejected_rollup_rebuild
SETTINGS insert_deduplicate = 0, max_bytes_before_external_group_by = 1000000000
SELECT
    site,
    verdict,
    toStartOfHour(toDateTime(time, 'UTC')) AS time,
    if(length(views_raw.ua) <= 300, views_raw.ua, leftUTF8(views_raw.ua, lengthUTF8(left(views_raw.ua, 301)) - 1)) AS ua,
    length(views_raw.ua) > 300 AS ua_cut,
    browser,
    device,
    if(verdict = 'datacenter', views_raw.asn, 0) AS asn,
    if(verdict = 'foreign_origin', views_raw.origin, '') AS origin,
    count() AS events,
    max(views_raw.time) AS last
FROM views_raw
WHERE verdict != 'valid' AND kind = 0 AND toYYYYMM(views_raw.time) = {month:UInt32} AND views_raw.time >= {cutoff:DateTime('UTC')}
  AND batch <= {fed:Map(UInt16, UInt64)}[partition]
  AND ({site:String} = '' OR site = {site:String}) AND views_raw.time < {to:DateTime('UTC')}
GROUP BY site, verdict, time, ua, ua_cut, browser, device, asn, origin
