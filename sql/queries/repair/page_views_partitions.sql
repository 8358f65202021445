-- page_views_partitions: the partitions (months) page_views_swap replaces:
-- every one that page_views or the staging table holds, so a month left
-- with no rows (its events gone from views_raw) is emptied too.
SELECT DISTINCT partition_id
FROM system.parts
WHERE database = currentDatabase() AND table IN ('page_views', 'page_views_rebuild') AND active
ORDER BY partition_id
