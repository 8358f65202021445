-- site_delete: removes a site's rows from one table (from site_tables).
--
-- A mutation, not a lightweight DELETE: it rewrites the parts holding the
-- site's rows, so the data is gone from disk (once the replaced parts
-- expire), not only masked; and it works on any MergeTree table, one with
-- projections included. mutations_sync = 2 makes the statement return only
-- when the rows are gone (on every replica of a replicated table), so the
-- API answers 200 with the deletion done rather than 202 and a mutation
-- to poll.
ALTER TABLE {table:Identifier} DELETE WHERE site = {site:String}
SETTINGS mutations_sync = 2
