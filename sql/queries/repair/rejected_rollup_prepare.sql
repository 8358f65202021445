-- rejected_rollup_prepare: first step of rebuilding rejected_rollup
-- (rollup.Rebuild), as page_views_prepare does for page_views: a staging
-- table filled and swapped in a month (partition) at a time, so readers
-- see the old rows until the new ones are complete, and a rebuild that
-- dies before the swap leaves rejected_rollup as it was (a rerun starts
-- over).
--
-- {cutoff:DateTime} is the first day whose events views_raw still holds in
-- full; the rows before it can only come from rejected_rollup itself and
-- are copied as they are (every row is one hour, inside one UTC day). With
-- {site} (not '') only that site's rows in [{cutoff}, {to}) are recounted
-- (a revalidation), and only the months the range touches are staged.
DROP TABLE IF EXISTS rejected_rollup_rebuild SYNC;

-- AS rejected_rollup copies the engine, partition key, sorting key, TTL
-- and settings, which REPLACE PARTITION requires to match.
CREATE TABLE rejected_rollup_rebuild AS rejected_rollup;

-- insert_deduplicate = 0: a fresh staging table has nothing to repeat, and
-- two equal blocks of one copy must both land.
INSERT INTO rejected_rollup_rebuild
SETTINGS insert_deduplicate = 0
SELECT site, verdict, time, ua, ua_cut, browser, device, asn, origin, events, last
FROM rejected_rollup
WHERE NOT (({site:String} = '' OR site = {site:String}) AND time >= {cutoff:DateTime('UTC')} AND time < {to:DateTime('UTC')})
  -- a revalidation swaps only the months its range touches
  AND ({site:String} = '' OR toYYYYMM(time) BETWEEN toYYYYMM({cutoff:DateTime('UTC')}) AND toYYYYMM({to:DateTime('UTC')} - 1));
