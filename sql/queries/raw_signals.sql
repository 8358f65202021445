-- raw_signals: a site's events with the request signals ingest recorded on
-- each (migration 013: the header flags and the client's AS number) and
-- their verdict, by page: which headers a header_mismatch view lacked,
-- which provider a datacenter view came from.
SELECT
    page,
    browser,
    req_flags,
    asn,
    verdict
FROM views_raw
WHERE site = {site:String}
ORDER BY page, time
