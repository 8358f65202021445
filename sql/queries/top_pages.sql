-- top_pages: the pages with the most valid views since {since} (whole UTC
-- hours), across sites, the most first: what the api's snapshot loads at
-- start (api.Snapshot.Warm). Read from dim_rollup's per-page hour rows,
-- which are ordered by bucket, so a day is one slice per site; views only,
-- no sketches. (top_page, not page: an alias shadows the column of the
-- same name in WHERE.)
SELECT site, value AS top_page
FROM dim_rollup
WHERE dim = 'page' AND page = '' AND grain = 'hour' AND bucket >= {since:DateTime('UTC')}
GROUP BY site, value
ORDER BY sum(views) DESC, site, top_page
LIMIT {limit:UInt32}
