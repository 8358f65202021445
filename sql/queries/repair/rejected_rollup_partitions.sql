-- rejected_rollup_partitions: the partitions (months) rejected_rollup_swap
-- replaces: every one that rejected_rollup or the staging table holds, so
-- a month left with no rows (its events gone from views_raw, or none
-- rejected any more) is emptied too.
SELECT DISTINCT partition_id
FROM system.parts
WHERE database = currentDatabase() AND table IN ('rejected_rollup', 'rejected_rollup_rebuild') AND active
ORDER BY partition_id
