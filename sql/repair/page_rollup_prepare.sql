-- page_rollup_prepare: first step of rebuilding page_rollup (rollup.Rebuild).
-- The rebuild fills a staging table and swaps it in whole at the end, so
-- readers see the old rollup until the new one is complete, and a rebuild
-- that dies half way leaves page_rollup as it was (a rerun starts over).
--
-- {cutoff:DateTime} is the first day whose events views_raw still holds in
-- full (the raw retention's TTL removes older rows). What lies before it
-- can only come from page_rollup itself: its minute, hour and day rows are
-- kept as they are, and its all-time rows become the merge of those old
-- days plus the recount of views_raw from the cutoff on. Merging
-- uniqCombined64 states is a union of the same visitor hashes, so the
-- all-time uniques come out as if counted in one go.
DROP TABLE IF EXISTS page_rollup_rebuild SYNC;

CREATE TABLE page_rollup_rebuild AS page_rollup;

-- insert_deduplicate = 0: a fresh staging table has nothing to repeat, and
-- two equal blocks of one copy must both land.
INSERT INTO page_rollup_rebuild
SETTINGS insert_deduplicate = 0
SELECT grain, site, page, bucket, views, uniques
FROM page_rollup
WHERE grain != 'total' AND bucket < {cutoff:DateTime('UTC')};

INSERT INTO page_rollup_rebuild
SETTINGS insert_deduplicate = 0
SELECT 'total', site, page, toDateTime(0, 'UTC'), sum(views), uniqCombined64MergeState(uniques)
FROM page_rollup
WHERE grain = 'day' AND bucket < {cutoff:DateTime('UTC')}
GROUP BY site, page;
