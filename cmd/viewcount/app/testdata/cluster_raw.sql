-- cluster_raw: a site's views_raw rows, and how many distinct stream events
-- (partition, seq, idx) they hold: a batch inserted twice would repeat
-- them. Then its valid rows and their distinct event ids (test only).
SELECT
    toUInt64(count()) AS rows,
    toUInt64(uniqExact(partition, seq, idx)) AS events,
    toUInt64(countIf(verdict = 'valid')) AS valid,
    toUInt64(uniqExactIf(event_id, verdict = 'valid')) AS valid_ids
FROM views_raw
WHERE site = {site:String}
