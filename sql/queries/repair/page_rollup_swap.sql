-- page_rollup_swap: puts the rebuilt rows in place of page_rollup's in one
-- step (page_rollup is not partitioned: its one partition is tuple()),
-- then drops the staging table. Detached parts are not touched: dropping
-- them is the caller's next step.

-- allow_replace_partition_from_empty_source: with no valid view at all the
-- rebuilt rollup is rightly empty.
ALTER TABLE page_rollup REPLACE PARTITION tuple() FROM page_rollup_rebuild
SETTINGS allow_replace_partition_from_empty_source = 1;

DROP TABLE IF EXISTS page_rollup_rebuild SYNC;
