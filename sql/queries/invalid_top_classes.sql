-- invalid_top_classes: per rejection reason, the browser and device classes
-- (the dashboard's dimensions, derived by the validator; '' = unknown) of
-- the most rejected events of a site, the top {limit} of each reason, most
-- first, for the invalid-traffic report: "Instagram · mobile" tells a
-- creator more than any one user agent does. Reads rejected_rollup
-- (migration 019), whose hours [from, to) cover the range (the report
-- widens it to whole UTC hours). Both columns hold a bounded set of
-- constants, so the grouping is small.
SELECT
    verdict,
    browser,
    device,
    toUInt64(sum(events)) AS events
FROM rejected_rollup
WHERE site = {site:String}
  AND time >= {from:DateTime64(3, 'UTC')}
  AND time < {to:DateTime64(3, 'UTC')}
GROUP BY verdict, browser, device
ORDER BY verdict, events DESC, browser, device
LIMIT {limit:UInt32} BY verdict
