-- page_views_swap: puts the rebuilt rows of one partition
-- ({partition:String}, a month's partition id, from page_views_partitions)
-- in place of page_views'. page_views is partitioned by month, so the swap
-- is a month at a time: each month is replaced in one step, and a rebuild
-- stopped between two months leaves the months not yet swapped as they
-- were (a rerun starts over). Detached parts are not touched: dropping
-- them is the caller's next step.

-- allow_replace_partition_from_empty_source: a month page_views holds but
-- the rebuild does not is rightly emptied.
ALTER TABLE page_views REPLACE PARTITION ID {partition:String} FROM page_views_rebuild
SETTINGS allow_replace_partition_from_empty_source = 1
