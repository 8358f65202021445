-- site_rows: rows a site has in one table (from site_tables), stated
-- before its data is deleted.
SELECT toUInt64(count()) AS rows
FROM {table:Identifier}
WHERE site = {site:String}
