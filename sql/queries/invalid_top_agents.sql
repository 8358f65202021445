-- invalid_top_agents: per rejection reason, the user agents behind the most
-- rejected events of a site (the top {limit} of each reason, most first),
-- with the browser and device class the validator derived from each, for
-- the invalid-traffic report: what lets a creator spot a false positive
-- (an in-app browser rejected as bot_ua). Reads rejected_rollup (migration
-- 019), whose hours [from, to) cover the range: the report widens it to
-- whole UTC hours.
--
-- The rollup keeps an agent's first 300 bytes, cut on a character
-- boundary (ua_cut: it was longer), so agents that share them are one row.
-- Agents are chosen by the client and a network rotating through them
-- sends as many distinct ones as it likes, so the ranking groups by a
-- 64-bit hash of the text, never by the text: its memory is a few dozen
-- bytes per distinct agent. Only the winners are read again with their
-- text. A tie at the limit is broken by the hash: arbitrary, but the same
-- every time. browser and device are those of the agent's newest event
-- (last; a later rule set may classify an agent anew).
WITH ranked AS (
    SELECT verdict, cityHash64(ua) AS h, sum(events) AS n
    FROM rejected_rollup
    WHERE site = {site:String}
      AND time >= {from:DateTime64(3, 'UTC')}
      AND time < {to:DateTime64(3, 'UTC')}
    GROUP BY verdict, h
    ORDER BY verdict, n DESC, h
    LIMIT {limit:UInt32} BY verdict
)
SELECT
    verdict,
    ua,
    toUInt8(max(ua_cut)) AS ua_cut,
    argMax(browser, last) AS ua_browser,
    argMax(device, last) AS ua_device,
    toUInt64(sum(events)) AS events
FROM rejected_rollup
WHERE site = {site:String}
  AND time >= {from:DateTime64(3, 'UTC')}
  AND time < {to:DateTime64(3, 'UTC')}
  AND (verdict, cityHash64(ua)) IN (SELECT verdict, h FROM ranked)
GROUP BY verdict, ua
ORDER BY verdict, events DESC, ua
LIMIT {limit:UInt32} BY verdict
