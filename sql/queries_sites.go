package sql

// Names of the queries in queries/ for managing sites, for Query.
const (
	SiteTables    = "site_tables"     // → name of every MergeTree table with a site column
	SiteRows      = "site_rows"       // params table (Identifier), site → rows
	SiteDelete    = "site_delete"     // params table (Identifier), site: deletes the site's rows, waits for it
	SitesLastView = "sites_last_view" // → site, last_view (DateTime, minute of the newest valid view)
)
