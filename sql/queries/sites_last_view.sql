-- sites_last_view: per site, the minute of its newest valid view (the
-- rollup's minute grain: one row per page and minute, never views_raw).
SELECT
    site,
    max(bucket) AS last_view
FROM page_rollup
WHERE grain = 'minute'
GROUP BY site
