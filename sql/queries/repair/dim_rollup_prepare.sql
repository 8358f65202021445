-- dim_rollup_prepare: first step of rebuilding dim_rollup (rollup.Rebuild),
-- as page_rollup_prepare does for page_rollup: a staging table filled and
-- swapped in whole at the end, so readers see the old rows until the new
-- ones are complete, and a rebuild that dies half way leaves dim_rollup as
-- it was (a rerun starts over).
--
-- {cutoff:DateTime} is the first day whose events views_raw still holds in
-- full. The rows before it (minute, hour and day rows alike: every bucket
-- lies inside one UTC day) can only come from dim_rollup itself and are
-- kept as they are. dim_rollup has no all-time rows, so nothing else has
-- to be merged across the cutoff. With {site} (not '') only that site's
-- rows in [{cutoff}, {to}) are recounted (a revalidation).
DROP TABLE IF EXISTS dim_rollup_rebuild SYNC;

-- AS dim_rollup copies the engine, sorting key and settings (the small
-- granules of migration 008, the compact parts of 011), which REPLACE
-- PARTITION requires to match anyway.
CREATE TABLE dim_rollup_rebuild AS dim_rollup;

-- insert_deduplicate = 0: a fresh staging table has nothing to repeat, and
-- two equal blocks of one copy must both land.
INSERT INTO dim_rollup_rebuild
SETTINGS insert_deduplicate = 0
SELECT grain, site, dim, page, value, bucket, views, uniques
FROM dim_rollup
WHERE NOT (({site:String} = '' OR site = {site:String}) AND bucket >= {cutoff:DateTime('UTC')} AND bucket < {to:DateTime('UTC')});
