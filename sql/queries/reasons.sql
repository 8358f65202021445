-- reasons: rows of views_raw by verdict for one site, for tests and audits.
SELECT
    verdict,
    toUInt64(count()) AS views
FROM views_raw
WHERE site = {site:String}
GROUP BY verdict
ORDER BY verdict
