-- engagement_rollup_prepare: first step of rebuilding engagement_rollup
-- (rollup.Rebuild), as dim_rollup_prepare does for dim_rollup: a staging
-- table filled and swapped in whole at the end, so readers see the old
-- rows until the new ones are complete, and a rebuild that dies half way
-- leaves engagement_rollup as it was (a rerun starts over).
--
-- {cutoff:DateTime} is the first day whose events views_raw still holds in
-- full. The rows before it (hour and day rows alike: every bucket lies
-- inside one UTC day) can only come from engagement_rollup itself and are
-- kept as they are. With {site} (not '') only that site's rows in
-- [{cutoff}, {to}) are recounted (a revalidation).
DROP TABLE IF EXISTS engagement_rollup_rebuild SYNC;

-- AS engagement_rollup copies the engine, sorting key and settings, which
-- REPLACE PARTITION requires to match anyway.
CREATE TABLE engagement_rollup_rebuild AS engagement_rollup;

-- insert_deduplicate = 0: a fresh staging table has nothing to repeat, and
-- two equal blocks of one copy must both land.
INSERT INTO engagement_rollup_rebuild
SETTINGS insert_deduplicate = 0
SELECT grain, site, dim, value, bucket, engagements, engaged_ms, engaged_hist, scroll_hist,
    visits, bounces, visit_ms, exits, rejected
FROM engagement_rollup
WHERE NOT (({site:String} = '' OR site = {site:String}) AND bucket >= {cutoff:DateTime('UTC')} AND bucket < {to:DateTime('UTC')});
