-- site_delete: removes a site's rows from one table (from site_tables).
--
-- A lightweight DELETE: it marks the rows deleted (hidden from every read
-- and merge at once) and the parts lose them at their next merge. It is
-- about five times faster than a mutation that rewrites the parts
-- (BENCHMARKS.md). lightweight_deletes_sync = 2 makes the statement return
-- only once the rows are marked (on every replica of a replicated table),
-- so the API answers 200 with the deletion done rather than 202 and a
-- mutation to poll. A table this cannot delete from (one with
-- projections, by default) gets site_delete_mutation instead.
DELETE FROM {table:Identifier} WHERE site = {site:String}
SETTINGS lightweight_deletes_sync = 2
