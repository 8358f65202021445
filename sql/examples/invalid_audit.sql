-- Who is behind the rejections? The networks (hashed /24 or /48) with the
-- most rejected events, with their reasons and the signals the rules saw.
-- A handful of rows holding most events is an attack; many small ones is
-- background noise (crawlers).
--
-- Reads views_raw: the signals (webdriver, datacenter, beacon hints) and
-- network ids are kept on its rows only. Its (site, verdict, time) key
-- makes it read the rejected rows' granules alone.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    network,
    sumMap(map(toString(verdict), toUInt64(1))) AS by_reason,
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
  AND kind = 0 -- views; engagement reports are rows too (migration 021)
  AND toDate(time, 'UTC') BETWEEN {from:Date} AND {to:Date}
GROUP BY network
ORDER BY events DESC, network
LIMIT 50
