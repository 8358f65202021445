// Package queries holds the named queries the roles run (NAME.sql, one
// query a file) and the repair scripts of `viewcount check` and `viewcount
// repair rollups` (repair/NAME.sql). Every file is embedded in the binary,
// and both stores (chDB and a ClickHouse server) run the same text.
//
// Go code never assembles SQL beyond {name:Type} placeholders, which the
// store binds server-side; a query that needs a new shape gets a new file.
package queries

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

//go:embed *.sql repair/*.sql
var files embed.FS

// Text returns the named query NAME.sql. Names are constants
// in the code that uses them, so an unknown name is a programming error and
// panics; a test loads every name in use.
func Text(name string) string {
	text, err := fs.ReadFile(files, name+".sql")
	if err != nil {
		panic(fmt.Sprintf("queries: unknown query %q", name))
	}
	return strings.TrimSpace(string(text))
}

// Repair returns the statements of the repair script repair/NAME.sql, in
// order. The scripts rebuild and recount one rollup each (see package
// rollup); an unknown name is a programming error and panics.
func Repair(name string) []string {
	text, err := fs.ReadFile(files, path.Join("repair", name+".sql"))
	if err != nil {
		panic(fmt.Sprintf("queries: unknown repair script %q", name))
	}
	return Split(string(text))
}

// Names lists the names Text accepts.
func Names() []string { return names(".") }

// Split cuts a script into statements. A statement ends at a line whose
// last non-blank character is ';' (the ';' is dropped), so a ';' inside a
// string or mid-line does not split. Pieces holding only comments and blank
// lines are dropped.
func Split(script string) []string {
	var (
		stmts []string
		cur   strings.Builder
	)
	flush := func() {
		s := strings.TrimSpace(cur.String())
		cur.Reset()
		if hasCode(s) {
			stmts = append(stmts, s)
		}
	}
	for line := range strings.Lines(script) {
		trimmed := strings.TrimRight(line, " \t\r\n")
		if strings.HasSuffix(trimmed, ";") {
			cur.WriteString(strings.TrimSuffix(trimmed, ";"))
			flush()
			continue
		}
		cur.WriteString(line)
	}
	flush()
	return stmts
}

// hasCode reports whether s holds anything besides "--" comment lines.
func hasCode(s string) bool {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "--") {
			return true
		}
	}
	return false
}

// Names of the queries, for Text.
const (
	PageCount              = "page_count"               // params site, page → views, uniques
	PageCounts             = "page_counts"              // params site, pages (Array(String)) → page, views, uniques
	PageEngagedCounts      = "page_engaged_counts"      // params site, pages, bucket, horizon → page, views (engaged), open
	SiteCount              = "site_count"               // params site → views, uniques
	TopPages               = "top_pages"                // params since, limit → site, page: the most viewed since
	Reasons                = "reasons"                  // params site → verdict, views
	InvalidByDay           = "invalid_by_day"           // params site, from, to (DateTime64, whole hours) → day, verdict, events, from dim_rollup
	InvalidASNs            = "invalid_asns"             // params site, from, to → asn, events: the top 20 networks of datacenter views (rejected_rollup)
	InvalidTopAgents       = "invalid_top_agents"       // params site, from, to, limit → verdict, ua, ua_cut, ua_browser, ua_device, events: the top user agents per reason (rejected_rollup)
	InvalidTopClasses      = "invalid_top_classes"      // params site, from, to, limit → verdict, browser, device, events: the top browser/device classes per reason (rejected_rollup)
	InvalidOrigins         = "invalid_origins"          // params site, from, to → origin, events: the top 20 page hosts of foreign_origin views (rejected_rollup)
	InvalidEngagement      = "invalid_engagement"       // params site, from, to, dfrom, dto, bucket, min_views, limit → dim, value, views, engaged, site_views, site_engaged, missing: values engaged far below the site (dim_rollup, engagement_rollup)
	Verdicts               = "verdicts"                 // → partition, seq, idx, event_id, verdict in stream order
	MigrationsInit         = "migrations_init"          // creates schema_migrations
	MigrationsApplied      = "migrations_applied"       // → version
	MigrationsRecord       = "migrations_record"        // params version, name
	PartitionMaxSeq        = "partition_max_seq"        // params partition → seq (0 when none)
	PartitionEvents        = "partition_events"         // params partition, from, to → seq, idx, event_id, time_ms
	RawRetention           = "raw_retention"            // params table → days of its TTL (0 = none)
	RawRetentionSet        = "raw_retention_set"        // params table (Identifier), days: sets its TTL
	DetachedParts          = "detached_parts"           // → table, name, reason, partition_id, bytes_on_disk, modified of damaged parts
	DropDetachedPart       = "drop_detached_part"       // params table (Identifier), part
	RawMonths              = "raw_months"               // → month (YYYYMM), rows of views_raw
	RawLost                = "raw_lost"                 // params cutoff → site, stored, raw, lost
	Feed                   = "feed"                     // params partition, first, last, since, token: views_raw → views_feed
	FeedRecord             = "feed_record"              // params partition, first, last, since
	FeedDone               = "feed_done"                // params partition, first, last, since: the feed's copy returned
	FeedProgress           = "feed_progress"            // → partition, first, last, since of each partition's latest feed, completed
	FeedBacklog            = "feed_backlog"             // params fed (Map(UInt16, UInt64)) → partition, last, rows
	FeedNextBatch          = "feed_next_batch"          // → a batch number above every one stored or fed
	RuleVersions           = "rule_versions"            // → rules, events, valid, first, last per rule set version
	RevalidateRecord       = "revalidate_record"        // params id, state, site, from, to, rules, who, judged, changed
	RevalidateStored       = "revalidate_stored"        // params site, partition, from, to → seq, idx, time, kind, verdict, page, rules, visit columns, hints
	RevalidateEvents       = "revalidate_events"        // params partition, from, to, after, limit → the events' fields in stream order
	RevalidateMonthChanges = "revalidate_month_changes" // params partition (views_raw's) → rows with a changed verdict
	RevalidatePageValid    = "revalidate_page_valid"    // params site, from, to → page, valid views
	PendingUnfed           = "pending_unfed"            // params since, fed → site, page, valid views not fed yet, the oldest one's receive time (Unix ms)
	PendingStored          = "pending_stored"           // params since, fed → partition, highest batch stored and not fed
	CorrectionsRecord      = "corrections_record"       // params id, action, who, why, site, kind, value, from, to
	CorrectionsList        = "corrections_list"         // → id, state, site, kind, value, range_from, range_to, added_at/by/why, undone_at/by/why
	ExplainEvent           = "explain_event"            // params site, id → revalidate_events' columns, verdict, rules, partition
	ExplainHistory         = "explain_history"          // params site, id, visitor, network, page, at, partition, seq, idx, w_retry, w_rate, w_rotation, w_dup → what the stateful rules read
)

// Names of the cluster schema runner's queries in queries/ (see
// migrations.ApplyCluster); '{cluster}' in them is put through
// migrations.OnCluster.
const (
	ClusterCheck             = "cluster_check"              // params cluster → hosts, replicas, foreground, quorum, db
	ClusterDatabase          = "cluster_database"           // params db (Identifier): creates it on every host
	ClusterMigrationsInit    = "cluster_migrations_init"    // creates cluster_migrations on every host
	ClusterMigrationsApplied = "cluster_migrations_applied" // → version
	ClusterMigrationsRecord  = "cluster_migrations_record"  // params version, name
	RawRetentionSetCluster   = "raw_retention_set_cluster"  // params table (Identifier, a _local table), days
)

// Names of the queries for managing sites, for Text.
const (
	SiteTables    = "site_tables"     // → name of every MergeTree table with a site column
	SiteRows      = "site_rows"       // params table (Identifier), site → rows
	SiteDelete    = "site_delete"     // params table (Identifier), site: deletes the site's rows, waits for it
	SitesLastView = "sites_last_view" // → site, last_view (DateTime, minute of the newest valid view)
)

func names(dir string) []string {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		panic(fmt.Sprintf("queries: embedded %s missing: %v", dir, err))
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".sql"); ok && !e.IsDir() {
			out = append(out, name)
		}
	}
	return out
}
