-- Which network operators (autonomous systems) send the rejected traffic,
-- and with which verdicts? A cloud provider's AS number at the top says
-- scripted clients; an eyeball ISP's says a browser extension or a
-- misbehaving app.
--
-- Reads views_raw: the AS number is kept on its rows only (ingest looks
-- it up before dropping the IP; 0 = unknown). Rejected rows only, which
-- the (site, verdict, time) key reads alone.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    asn,
    count() AS events,
    countIf(datacenter) AS from_datacenter,
    uniqCombined64(network) AS networks,
    sumMap(map(toString(verdict), toUInt64(1))) AS by_reason
FROM views_raw
WHERE site = {site:String}
  AND verdict != 'valid'
  AND kind = 0 -- views; engagement reports are rows too (migration 021)
  AND toDate(time, 'UTC') BETWEEN {from:Date} AND {to:Date}
GROUP BY asn
ORDER BY events DESC, asn
LIMIT 20
