-- page_views_prepare: first step of rebuilding page_views (rollup.Rebuild).
-- The rebuild fills a staging table and swaps it in at the end, a month
-- (partition) at a time, so readers see the old rows until the new ones
-- are complete, and a rebuild that dies before the swap leaves page_views
-- as it was (a rerun starts over).
--
-- {cutoff:DateTime} is the first day whose events views_raw still holds in
-- full; the rows before it can only come from page_views itself and are
-- copied as they are. (page_views expires with views_raw, so there are
-- few: the days between the retention's edge and the month's end the TTL
-- has not dropped yet.)
DROP TABLE IF EXISTS page_views_rebuild SYNC;

-- AS page_views copies the partition key, sorting key, TTL and settings,
-- which REPLACE PARTITION requires to match.
CREATE TABLE page_views_rebuild AS page_views;

-- insert_deduplicate = 0: a fresh staging table has nothing to repeat, and
-- two equal blocks of one copy must both land.
INSERT INTO page_views_rebuild
SETTINGS insert_deduplicate = 0
SELECT site, page, time, visitor, ref_source, ref_host, utm_source, utm_medium, utm_campaign, browser, os, device, country, screen
FROM page_views
WHERE NOT (({site:String} = '' OR site = {site:String}) AND time >= {cutoff:DateTime('UTC')} AND time < {to:DateTime('UTC')})
  -- a revalidation swaps only the months its range touches
  AND ({site:String} = '' OR toYYYYMM(time) BETWEEN toYYYYMM({cutoff:DateTime('UTC')}) AND toYYYYMM({to:DateTime('UTC')} - 1));
