-- site_delete: removes a site's rows from one table (from site_tables).
--
-- A mutation, not a lightweight DELETE: it rewrites the parts holding the
-- site's rows, so the data leaves the disk (the replaced parts are removed
-- minutes later), where a lightweight DELETE only masks rows until the
-- parts' next merge, which for a large old part may never come. It also
-- works on every MergeTree table, where a lightweight DELETE refuses one
-- with projections. Measured on 1M views beside 1M of another site, the
-- two took about as long (BenchmarkDeleteSite; docs/benchmarks/README.md,
-- "Admin, revalidation and repair"). mutations_sync = 2 makes the
-- statement return only when the rows are gone (on every replica of a
-- replicated table), so the API answers 200 with the deletion done rather
-- than 202 and a mutation to poll.
ALTER TABLE {table:Identifier} DELETE WHERE site = {site:String}
SETTINGS mutations_sync = 2
