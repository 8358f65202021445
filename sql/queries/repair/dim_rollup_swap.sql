-- dim_rollup_swap: puts the rebuilt rows in place of dim_rollup's in one
-- step (dim_rollup is not partitioned: its one partition is tuple()), then
-- drops the staging table. Detached parts are not touched: dropping them
-- is the caller's next step.

-- allow_replace_partition_from_empty_source: with no event at all the
-- rebuilt rollup is rightly empty.
ALTER TABLE dim_rollup REPLACE PARTITION tuple() FROM dim_rollup_rebuild
SETTINGS allow_replace_partition_from_empty_source = 1;

DROP TABLE IF EXISTS dim_rollup_rebuild SYNC;
