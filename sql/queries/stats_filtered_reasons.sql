-- stats_filtered_reasons: rejected events per page and reason over
-- [from, to) for the given pages (stats_filtered_pages' top ones), from
-- the per-page 'reason' rows (hours only, migration 008). A separate query
-- rather than a join on the ranking: ClickHouse evaluated the ranking
-- twice and the join read every page's rows (41-75 ms against 13 + 13 ms
-- for the two on the 10M-event history).
SELECT page, value AS reason, toUInt64(sum(views)) AS events
FROM dim_rollup
WHERE site = {site:String} AND dim = 'reason' AND page IN {pages:Array(String)}
  AND grain = 'hour' AND bucket >= {from:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}
GROUP BY page, reason
