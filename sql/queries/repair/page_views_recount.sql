-- page_views_recount: the pages and days where page_views differs from
-- views_raw's valid views (`viewcount check`), at most {limit} of them,
-- each with the number of differing ones in all. Read-only.
--
-- page_views holds every valid view once (migration 011), so for each
-- site, page and UTC day from {cutoff} on its rows must equal what
-- page_views_mv's SELECT makes of views_raw: the same number of rows and
-- the same sum of a hash of each whole row (the sum wraps around 2^64; a
-- missing, doubled or altered row changes it). Before the cutoff the raw
-- retention removed views_raw's events and page_views' rows are their own
-- truth (page_views_prepare keeps them), so they are not compared.
SELECT
    'day' AS grain,
    site,
    page,
    toString(day) AS bucket,
    stored_views,
    recount_views,
    stored_checksum,
    recount_checksum,
    count() OVER () AS differing
FROM
(
    SELECT toString(site) AS site, page, toStartOfDay(time) AS day,
           count() AS stored_views,
           sum(cityHash64(site, page, time, visitor, ref_source, ref_host, utm_source, utm_medium, utm_campaign,
               browser, os, device, country, screen)) AS stored_checksum
    FROM page_views
    WHERE time >= {cutoff:DateTime('UTC')}
    GROUP BY site, page, day
) AS s
FULL OUTER JOIN
(
    SELECT toString(site) AS site, page, toStartOfDay(time) AS day,
           count() AS recount_views,
           sum(cityHash64(site, page, time, visitor, ref_source, ref_host, utm_source, utm_medium, utm_campaign,
               browser, os, device, country, screen)) AS recount_checksum
    FROM
    (
        SELECT site, page, toDateTime(time, 'UTC') AS time, visitor,
            ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen
        FROM views_raw
        WHERE verdict = 'valid' AND kind = 0 AND time >= {cutoff:DateTime('UTC')}
          AND batch <= {fed:Map(UInt16, UInt64)}[partition]
    )
    GROUP BY site, page, day
) AS r USING (site, page, day)
WHERE (stored_views != recount_views OR stored_checksum != recount_checksum)
  AND ((toDateTime(bucket, 'UTC') >= {from:DateTime('UTC')} AND toDateTime(bucket, 'UTC') < {to:DateTime('UTC')}))
ORDER BY site, page, day
LIMIT {limit:UInt32}
