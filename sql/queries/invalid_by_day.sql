-- invalid_by_day: events of a site by UTC day and verdict (valid included,
-- so a report can state shares), for the invalid-traffic report. views_raw
-- is ordered by (site, verdict, time): this reads one range per verdict.
SELECT
    toString(toDate(time, 'UTC')) AS day,
    verdict,
    toUInt64(count()) AS events
FROM views_raw
WHERE site = {site:String}
  AND time >= {from:DateTime64(3, 'UTC')}
  AND time < {to:DateTime64(3, 'UTC')}
GROUP BY day, verdict
ORDER BY day, verdict
