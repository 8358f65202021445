-- Who is behind the rejections: the networks (hashed /24 or /48) and
-- visitors with the most rejected events over the last 7 days, with their
-- reasons and the signals the rules saw. A handful of rows with most of the
-- events is an attack; many small ones is background noise (crawlers).
--
-- Parameters: {site:String}.
SELECT
    network,
    groupUniqArray(verdict) AS reasons,
    count() AS events,
    uniqCombined64(visitor) AS visitors,
    uniqCombined64(ua) AS user_agents,
    countIf(datacenter) AS from_datacenter,
    countIf(webdriver) AS webdriver,
    countIf(hints_present AND (screen_w = 0 OR languages = 0)) AS impossible_hints,
    min(time) AS first_seen,
    max(time) AS last_seen
FROM views_raw
WHERE site = {site:String}
  AND verdict != 'valid'
  AND time >= now64(3, 'UTC') - INTERVAL 7 DAY
GROUP BY network
ORDER BY events DESC
LIMIT 50
