-- rejected_rollup_swap: puts the rebuilt rows of one partition
-- ({partition:String}, a month's partition id, from
-- rejected_rollup_partitions) in place of rejected_rollup's, a month at a
-- time as page_views_swap does. Detached parts are not touched: dropping
-- them is the caller's next step.

-- allow_replace_partition_from_empty_source: a month rejected_rollup holds
-- but the rebuild does not is rightly emptied.
ALTER TABLE rejected_rollup REPLACE PARTITION ID {partition:String} FROM rejected_rollup_rebuild
SETTINGS allow_replace_partition_from_empty_source = 1
