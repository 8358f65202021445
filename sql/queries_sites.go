package sql

// Names of the queries in queries/ for managing sites, for Query.
const (
	SiteTables         = "site_tables"          // → name of every MergeTree table with a site column
	SiteRows           = "site_rows"            // params table (Identifier), site → rows
	SiteDelete         = "site_delete"          // params table (Identifier), site: deletes the site's rows (lightweight), waits for it
	SiteDeleteMutation = "site_delete_mutation" // params table (Identifier), site: the same by a mutation, for tables site_delete refuses
	SitesLastView      = "sites_last_view"      // → site, last_view (DateTime, minute of the newest valid view)
)
