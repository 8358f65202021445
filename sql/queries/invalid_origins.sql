-- invalid_origins: a site's foreign_origin views by the host of the page
-- they came from (migration 018), most first, for the invalid-traffic
-- report: another site stuffing the tag into its pages, a developer's
-- localhost, or a host of the site's own that its hostnames leave out (a
-- translation proxy, an AMP cache), which the owner may add. Reads
-- rejected_rollup (migration 019), which keeps the page host of
-- foreign_origin verdicts, over its hours [from, to); it is ordered by
-- (site, verdict, time): this reads the foreign_origin range only.
SELECT
    origin,
    toUInt64(sum(events)) AS events
FROM rejected_rollup
WHERE site = {site:String}
  AND verdict = 'foreign_origin'
  AND time >= {from:DateTime64(3, 'UTC')}
  AND time < {to:DateTime64(3, 'UTC')}
GROUP BY origin
ORDER BY events DESC, origin
LIMIT 20
