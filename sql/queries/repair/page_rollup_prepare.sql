-- page_rollup_prepare: first step of rebuilding page_rollup (rollup.Rebuild).
-- The rebuild fills a staging table and swaps it in whole at the end, so
-- readers see the old rollup until the new one is complete, and a rebuild
-- that dies half way leaves page_rollup as it was (a rerun starts over).
--
-- {cutoff:DateTime} is the first day whose events views_raw still holds in
-- full (the raw retention's TTL removes older rows). What lies before it
-- can only come from page_rollup itself: its minute, hour and day rows are
-- kept as they are; all-time rows are merged from the day rows once the
-- fill is done (page_rollup_totals). Merging uniqCombined64 states is a
-- union of the same visitor hashes, so the all-time uniques come out as if
-- counted in one go.
--
-- With {site} (not '') only that site's rows in [{cutoff}, {to}) are
-- recounted (a revalidation): everything else is kept, the other sites'
-- all-time rows included.
DROP TABLE IF EXISTS page_rollup_rebuild SYNC;

CREATE TABLE page_rollup_rebuild AS page_rollup;

-- insert_deduplicate = 0: a fresh staging table has nothing to repeat, and
-- two equal blocks of one copy must both land.
INSERT INTO page_rollup_rebuild
SETTINGS insert_deduplicate = 0
SELECT grain, site, page, bucket, views, uniques
FROM page_rollup
WHERE if(grain = 'total',
    {site:String} != '' AND site != {site:String},
    NOT (({site:String} = '' OR site = {site:String}) AND bucket >= {cutoff:DateTime('UTC')} AND bucket < {to:DateTime('UTC')}));
