-- rejected_rollup_recount: the rows of rejected_rollup in one month
-- ({month:UInt32}, YYYYMM, from rejected_rollup_months) that differ from a
-- recount (`viewcount check`, `viewcount reconcile`), at most {limit} of
-- them, each with the number of differing rows of the month in all.
-- Read-only.
--
-- The recount is what rejected_rollup_fill would build: views_raw's
-- rejected events from {cutoff} on, counted by rejected_rollup_mv's SELECT
-- (migrations 019 and 021). Before the cutoff, where the raw retention removed
-- events, the rows are their own truth (rejected_rollup_prepare keeps
-- them), so only rows from the cutoff on are compared. Both the events
-- and the newest event's time (last) must be equal; the reason is
-- returned as dim and the user agent as value.
SELECT
    'hour' AS grain,
    site,
    verdict AS dim,
    ua AS value,
    ua_cut,
    browser,
    device,
    asn,
    origin,
    toString(time) AS bucket,
    stored_views,
    recount_views,
    toString(stored_last) AS stored_last,
    toString(recount_last) AS recount_last,
    count() OVER () AS differing
FROM
(
    SELECT toString(site) AS site, toString(verdict) AS verdict, time, ua, ua_cut, toString(browser) AS browser,
           toString(device) AS device, asn, toString(origin) AS origin,
           toUInt64(sum(events)) AS stored_views,
           max(last) AS stored_last
    FROM rejected_rollup
    WHERE time >= {cutoff:DateTime('UTC')} AND toYYYYMM(time) = {month:UInt32}
    GROUP BY site, verdict, time, ua, ua_cut, browser, device, asn, origin
) AS s
FULL OUTER JOIN
(
    SELECT toString(site) AS site, toString(verdict) AS verdict, toStartOfHour(toDateTime(views_raw.time, 'UTC')) AS time,
           if(length(views_raw.ua) <= 300, views_raw.ua, leftUTF8(views_raw.ua, lengthUTF8(left(views_raw.ua, 301)) - 1)) AS ua,
           length(views_raw.ua) > 300 AS ua_cut,
           toString(browser) AS browser,
           toString(device) AS device,
           if(views_raw.verdict = 'datacenter', views_raw.asn, 0) AS asn,
           if(views_raw.verdict = 'foreign_origin', toString(views_raw.origin), '') AS origin,
           count() AS recount_views,
           max(views_raw.time) AS recount_last
    FROM views_raw
    WHERE views_raw.verdict != 'valid' AND views_raw.kind = 0 AND views_raw.time >= {cutoff:DateTime('UTC')} AND toYYYYMM(views_raw.time) = {month:UInt32}
      AND batch <= {fed:Map(UInt16, UInt64)}[partition]
    GROUP BY site, verdict, time, ua, ua_cut, browser, device, asn, origin
) AS r USING (site, verdict, time, ua, ua_cut, browser, device, asn, origin)
WHERE (stored_views != recount_views OR stored_last != recount_last)
  AND toDateTime(bucket, 'UTC') >= {from:DateTime('UTC')} AND toDateTime(bucket, 'UTC') < {to:DateTime('UTC')}
ORDER BY site, dim, bucket, value, browser, device, asn, origin
LIMIT {limit:UInt32}
-- As rejected_rollup_fill: a month's GROUP BY spills to disk past 1 GB.
SETTINGS max_bytes_before_external_group_by = 1000000000
