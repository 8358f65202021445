-- invalid_top_agents: per rejection reason, the user agents behind the most
-- rejected events of a site (the top {limit} of each reason, most first),
-- with the browser and device class the validator derived from each, for
-- the invalid-traffic report: what lets a creator spot a false positive
-- (an in-app browser rejected as bot_ua).
--
-- User agents are chosen by the client, up to 512 bytes each, and a network
-- rotating through them sends as many distinct ones as it likes, so the
-- ranking groups by a 64-bit hash of the text, never by the text: its
-- memory is a few dozen bytes per distinct agent, whatever their length.
-- Only the winners are read again with their text. A tie at the limit is
-- broken by the hash: arbitrary, but the same every time. browser and
-- device are the newest row's (a later rule set may classify an agent
-- anew). views_raw is ordered by (site, verdict, time): the valid range is
-- not read.
WITH ranked AS (
    SELECT verdict, cityHash64(ua) AS h, count() AS n
    FROM views_raw
    WHERE site = {site:String}
      AND verdict != 'valid'
      AND time >= {from:DateTime64(3, 'UTC')}
      AND time < {to:DateTime64(3, 'UTC')}
    GROUP BY verdict, h
    ORDER BY verdict, n DESC, h
    LIMIT {limit:UInt32} BY verdict
)
SELECT
    verdict,
    ua,
    argMax(browser, time) AS ua_browser,
    argMax(device, time) AS ua_device,
    toUInt64(count()) AS events
FROM views_raw
WHERE site = {site:String}
  AND verdict != 'valid'
  AND time >= {from:DateTime64(3, 'UTC')}
  AND time < {to:DateTime64(3, 'UTC')}
  AND (verdict, cityHash64(ua)) IN (SELECT verdict, h FROM ranked)
GROUP BY verdict, ua
ORDER BY verdict, events DESC, ua
LIMIT {limit:UInt32} BY verdict
