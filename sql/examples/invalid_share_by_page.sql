-- Pages whose traffic is most invalid over the last 7 days: a page a bot
-- farm targets stands out here before it does in any count. Both valid and
-- rejected events are read, so this scans the site's rows of the period.
--
-- Parameters: {site:String}.
SELECT
    page,
    count() AS events,
    countIf(verdict = 'valid') AS valid,
    round(countIf(verdict != 'valid') / count(), 4) AS invalid_share,
    topK(3)(verdict) AS top_verdicts
FROM views_raw
WHERE site = {site:String}
  AND time >= now64(3, 'UTC') - INTERVAL 7 DAY
GROUP BY page
HAVING events >= 20
ORDER BY invalid_share DESC, events DESC
LIMIT 50
