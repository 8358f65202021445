-- site_delete_mutation: removes a site's rows from one table by a mutation
-- that rewrites the parts holding them; what site_delete falls back to on
-- a table a lightweight DELETE refuses (one with projections, by default).
-- mutations_sync = 2: the statement returns once the rows are gone, on
-- every replica.
ALTER TABLE {table:Identifier} DELETE WHERE site = {site:String}
SETTINGS mutations_sync = 2
