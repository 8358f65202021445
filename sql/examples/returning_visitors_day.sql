-- How many visitors come back within a day? Per UTC day: distinct
-- visitors, those with more than one visit (a visit ends after 30
-- minutes without a view), their share, and the day's visits.
--
-- Reads views_raw's valid rows: a visitor's views with their times, which
-- no rollup keeps (a sketch says how many visitors, not who came twice).
-- Visitor ids rotate daily (the salt is per UTC day), so a return is only
-- seen within the day.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    day,
    count() AS visitors,
    countIf(visits > 1) AS returning,
    round(returning / visitors, 4) AS returning_share,
    sum(visits) AS total_visits
FROM
(
    SELECT
        toDate(time, 'UTC') AS day,
        visitor,
        1 + arrayCount(gap -> gap > 30 * 60 * 1000,
            arrayDifference(arraySort(groupArray(toUnixTimestamp64Milli(time))))) AS visits
    FROM views_raw
    WHERE site = {site:String}
      AND verdict = 'valid'
      AND kind = 0 -- views; engagement reports are rows too (migration 021)
      AND toDate(time, 'UTC') BETWEEN {from:Date} AND {to:Date}
    GROUP BY day, visitor
)
GROUP BY day
ORDER BY day
