-- invalid_origins: a site's foreign_origin views by the host of the page
-- they came from (migration 018), most first, for the invalid-traffic
-- report: another site stuffing the tag into its pages, a developer's
-- localhost, or a host of the site's own that its hostnames leave out (a
-- translation proxy, an AMP cache), which the owner may add. Reads the
-- foreign_origin range of views_raw only.
SELECT
    origin,
    toUInt64(count()) AS events
FROM views_raw
WHERE site = {site:String}
  AND verdict = 'foreign_origin'
  AND time >= {from:DateTime64(3, 'UTC')}
  AND time < {to:DateTime64(3, 'UTC')}
GROUP BY origin
ORDER BY events DESC, origin
LIMIT 20
