-- raw_lost: per site, valid views the day rollup holds from {cutoff} on
-- beyond what views_raw still holds for the same days. After a views_raw
-- part was set aside these are the views a rebuild from views_raw would
-- drop. (Before the cutoff the raw retention removes events on purpose and
-- a rebuild keeps the rollup's own rows.)
SELECT
    site,
    stored,
    raw,
    stored - raw AS lost
FROM
(
    SELECT site, toUInt64(sum(views)) AS stored
    FROM page_rollup
    WHERE grain = 'day' AND bucket >= {cutoff:DateTime('UTC')}
    GROUP BY site
) AS r
LEFT JOIN
(
    SELECT site, count() AS raw
    FROM views_raw
    WHERE verdict = 'valid' AND kind = 0 AND time >= {cutoff:DateTime('UTC')}
    GROUP BY site
) AS v USING (site)
WHERE stored > raw
ORDER BY lost DESC, site
