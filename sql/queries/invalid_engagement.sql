-- invalid_engagement: the invalid-traffic report's engagement outliers
-- (docs/invalid-traffic.md, "Engagement by network, referrer and
-- browser"): a site's valid views and engaged views by AS number (dim
-- 'asn', migration 022), referrer host ('referrer') and browser
-- ('browser') in [from, to), set against the site's own ('total').
--
-- Views are dim_rollup's, engaged views engagement_rollup's engaged-time
-- histogram from bucket {bucket:UInt8} (the site's engaged_after) up: the
-- definition of the engaged public count (page_engaged_counts.sql), at
-- the hour of the view. Whole UTC days [dfrom, dto) are read from the day
-- rows, the hours around them from the hour rows, so a year reads a day's
-- rows per value instead of 24. Every figure is a sum: rows are summed
-- unmerged.
--
-- A row per kept value and one for the site (dim 'total', value ''),
-- which carries the site's figures whatever the filters. A value is kept
-- when it has at least {min_views:UInt64} views, names something (not ''
-- or AS 0: unknown) and its engaged share is below the site's (engaged ×
-- site views < views × site engaged, exact in integers). missing is the
-- engaged views it lacks against the site's share (views × site share −
-- engaged, rounded): the ranking, most first, so a network with many views
-- and a share far below the site's leads, and a handful of views with
-- none does not. At most {limit:UInt32} values per dim.
SELECT
    dim,
    value,
    views,
    engaged,
    site_views,
    site_engaged,
    toInt64(round(views * site_engaged / greatest(site_views, 1))) - toInt64(engaged) AS missing
FROM
(
    SELECT dim, value, views, engaged,
        maxIf(views, dim = 'total') OVER () AS site_views,
        maxIf(engaged, dim = 'total') OVER () AS site_engaged
    FROM
    (
        SELECT dim, value, toUInt64(greatest(sum(v), 0)) AS views, toUInt64(greatest(sum(e), 0)) AS engaged
        FROM
        (
            SELECT toString(dim) AS dim, value, toInt64(views) AS v, toInt64(0) AS e
            FROM dim_rollup
            WHERE site = {site:String} AND dim IN ('total', 'asn', 'referrer', 'browser') AND page = ''
              AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                                     OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
            UNION ALL
            SELECT toString(dim) AS dim, value, toInt64(0) AS v,
                arraySum(arrayMap((k, n) -> if(k >= {bucket:UInt8}, n, 0), mapKeys(engaged_hist), mapValues(engaged_hist))) AS e
            FROM engagement_rollup
            WHERE site = {site:String} AND dim IN ('total', 'asn', 'referrer', 'browser')
              AND ((grain = 'day' AND bucket >= {dfrom:DateTime('UTC')} AND bucket < {dto:DateTime('UTC')})
                OR (grain = 'hour' AND ((bucket >= {from:DateTime('UTC')} AND bucket < {dfrom:DateTime('UTC')})
                                     OR (bucket >= {dto:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}))))
        )
        GROUP BY dim, value
    )
)
WHERE dim = 'total'
   OR (views >= {min_views:UInt64} AND value != '' AND NOT (dim = 'asn' AND value = '0')
       AND engaged * site_views < views * site_engaged)
ORDER BY dim = 'total' DESC, dim, missing DESC, views DESC, value
LIMIT {limit:UInt32} BY dim
