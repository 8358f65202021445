-- Which pages' filtered share jumped this week? Per page: events (valid
-- and rejected) and the share rejected in the 7 days ending {to} and in
-- the 7 days before, the biggest rise first. Pages with fewer than 20
-- events this week are left out; a page new this week had a share of 0.
--
-- Reads dim_rollup's day rows of dims 'page' (valid views per page) and
-- 'filtered_page' (rejected events per page): two weeks of a site's pages
-- in a few rows each, not every event.
--
-- Parameters: {site:String}, {to:Date} (the last UTC day of this week).
SELECT
    value AS page,
    this_events,
    round(this_filtered / this_events, 4) AS this_share,
    last_events,
    round(if(last_events = 0, 0, last_filtered / last_events), 4) AS last_share,
    round(this_share - last_share, 4) AS jump
FROM
(
    SELECT
        value,
        sumIf(views, this) AS this_events,
        sumIf(views, this AND dim = 'filtered_page') AS this_filtered,
        sumIf(views, NOT this) AS last_events,
        sumIf(views, NOT this AND dim = 'filtered_page') AS last_filtered
    FROM
    (
        SELECT value, dim, views, toDate(bucket) > {to:Date} - 7 AS this
        FROM dim_rollup
        WHERE site = {site:String}
          AND dim IN ('page', 'filtered_page')
          AND page = ''
          AND grain = 'day'
          AND toDate(bucket) BETWEEN {to:Date} - 13 AND {to:Date}
    )
    GROUP BY value
)
WHERE this_events >= 20
ORDER BY jump DESC, page
LIMIT 20
