-- verdict_counts: rows of views_raw per verdict for a site.
SELECT verdict, toUInt64(count()) AS n
FROM views_raw
WHERE site = {site:String}
GROUP BY verdict
ORDER BY verdict
