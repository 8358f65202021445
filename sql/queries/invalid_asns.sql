-- invalid_asns: a site's datacenter views by the client's AS
-- number (migration 013; 0 = unknown: a --datacenter-ranges match, or a
-- row from before AS numbers were recorded), most first, for the
-- invalid-traffic report: which providers sent them. views_raw is ordered
-- by (site, verdict, time): this reads the datacenter range only.
SELECT
    asn,
    toUInt64(count()) AS events
FROM views_raw
WHERE site = {site:String}
  AND verdict = 'datacenter'
  AND time >= {from:DateTime64(3, 'UTC')}
  AND time < {to:DateTime64(3, 'UTC')}
GROUP BY asn
ORDER BY events DESC, asn
LIMIT 20
