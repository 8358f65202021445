-- Which pages' traffic is most invalid? A page a bot farm targets stands
-- out here before it does in any count.
--
-- Reads views_raw, valid and rejected rows of the range, because only it
-- has each page's events side by side with their reasons. Pages
-- with fewer than 20 events are left out: their shares are noise.
--
-- Parameters: {site:String}, {from:Date}, {to:Date} (UTC days, both
-- included).
SELECT
    page,
    count() AS events,
    countIf(verdict = 'valid') AS valid,
    round(countIf(verdict != 'valid') / count(), 4) AS invalid_share,
    sumMapIf(map(toString(verdict), toUInt64(1)), verdict != 'valid') AS by_reason
FROM views_raw
WHERE site = {site:String}
  AND kind = 0 -- views; engagement reports are rows too (migration 021)
  AND toDate(time, 'UTC') BETWEEN {from:Date} AND {to:Date}
GROUP BY page
HAVING events >= 20
ORDER BY invalid_share DESC, events DESC, page
LIMIT 50
