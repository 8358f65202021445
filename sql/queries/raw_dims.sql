-- raw_dims: a site's events with the dashboard dimensions stored on each
-- (migration 007), by page, for tests and audits of the enrichment.
SELECT
    page,
    utm_source,
    utm_medium,
    utm_campaign,
    country,
    ref_host,
    ref_source,
    browser,
    os,
    device,
    screen,
    verdict
FROM views_raw
WHERE site = {site:String}
ORDER BY page, time
