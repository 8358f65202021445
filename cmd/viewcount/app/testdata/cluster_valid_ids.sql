-- cluster_valid_ids: every event id counted as valid for a site (test only).
SELECT DISTINCT event_id
FROM views_raw
WHERE site = {site:String} AND verdict = 'valid'
