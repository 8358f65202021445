-- engagement_rollup_swap: puts the rebuilt rows in place of
-- engagement_rollup's in one step (engagement_rollup is not partitioned:
-- its one partition is tuple()), then drops the staging table. Detached
-- parts are not touched: dropping them is the caller's next step.

-- allow_replace_partition_from_empty_source: with no engagement or visit
-- at all the rebuilt rollup is rightly empty.
ALTER TABLE engagement_rollup REPLACE PARTITION tuple() FROM engagement_rollup_rebuild
SETTINGS allow_replace_partition_from_empty_source = 1;

DROP TABLE IF EXISTS engagement_rollup_rebuild SYNC;
