-- site_tables: the tables of this database that hold rows per site (a
-- column named site), for deleting a site's data. Found at run time, so a
-- rollup added by a later migration is covered without touching the
-- delete. Only MergeTree-family tables: views (plain and materialized)
-- store nothing of their own, and mutations run on MergeTree tables only.
SELECT name
FROM system.tables
WHERE database = currentDatabase()
  AND engine LIKE '%MergeTree'
  AND NOT is_temporary
  AND name IN (
      SELECT table FROM system.columns
      WHERE database = currentDatabase() AND name = 'site'
  )
ORDER BY name
