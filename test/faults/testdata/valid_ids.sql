-- valid_ids: every view's event id counted as valid for a site, with how
-- often (an engagement report carries its view's id, and is no view).
SELECT
    event_id,
    toUInt64(count()) AS n
FROM views_raw
WHERE site = {site:String} AND verdict = 'valid' AND kind = 0
GROUP BY event_id
