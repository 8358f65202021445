-- valid_ids: every event id counted as valid for a site, with how often.
SELECT
    event_id,
    toUInt64(count()) AS n
FROM views_raw
WHERE site = {site:String} AND verdict = 'valid'
GROUP BY event_id
