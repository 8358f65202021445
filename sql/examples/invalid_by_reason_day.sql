-- Invalid traffic by reason and day over the last 30 days.
--
-- Reads views_raw, where every rejected event keeps its reason; with the
-- (site, verdict, time) sort key only the rejected rows' granules are read.
-- distinct_visitors tells one noisy visitor from a broad pattern.
--
-- Parameters: {site:String}.
SELECT
    toDate(time, 'UTC') AS day,
    verdict AS reason,
    count() AS events,
    uniqCombined64(visitor) AS distinct_visitors
FROM views_raw
WHERE site = {site:String}
  AND verdict != 'valid'
  AND time >= now64(3, 'UTC') - INTERVAL 30 DAY
GROUP BY day, reason
ORDER BY day DESC, events DESC
