-- invalid_asns: a site's datacenter views by the client's AS number
-- (migration 013; 0 = unknown: a --datacenter-ranges match, or a row from
-- before AS numbers were recorded), most first, for the invalid-traffic
-- report: which providers sent them. Reads rejected_rollup (migration
-- 019), which keeps the AS number of datacenter verdicts, over its hours
-- [from, to); it is ordered by (site, verdict, time): this reads the
-- datacenter range only.
SELECT
    asn,
    toUInt64(sum(events)) AS events
FROM rejected_rollup
WHERE site = {site:String}
  AND verdict = 'datacenter'
  AND time >= {from:DateTime64(3, 'UTC')}
  AND time < {to:DateTime64(3, 'UTC')}
GROUP BY asn
ORDER BY events DESC, asn
LIMIT 20
