// Package sql holds Viewcount's SQL: the numbered schema migrations, the
// named queries the roles run, and example queries for analysts. Every file
// is embedded in the binary, and both stores (chDB and a ClickHouse server)
// run the same text.
//
// Go code never assembles SQL beyond {name:Type} placeholders, which the
// store binds server-side; a query that needs a new shape gets a new file.
package sql

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql queries/*.sql examples/*.sql repair/*.sql cluster/*.sql
var files embed.FS

// Migration is one numbered schema change, from migrations/NNN_name.sql.
// Statements are run in order; each is idempotent (IF NOT EXISTS), so a
// migration interrupted half way can simply be run again.
type Migration struct {
	Version    int
	Name       string // file name without the number and extension, e.g. "views_raw"
	Statements []string
}

// Migrations returns every migration, sorted by version. It fails only if a
// file is misnamed or two share a version, which a test catches.
func Migrations() ([]Migration, error) { return readMigrations("migrations") }

// readMigrations reads dir's NNN_name.sql files, sorted by version.
func readMigrations(dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var ms []Migration
	seen := make(map[int]string)
	for _, e := range entries {
		name := e.Name()
		num, rest, ok := strings.Cut(strings.TrimSuffix(name, ".sql"), "_")
		version, err := strconv.Atoi(num)
		if !ok || err != nil || version <= 0 || rest == "" {
			return nil, fmt.Errorf("migration %q: want NNN_name.sql", name)
		}
		if prev, dup := seen[version]; dup {
			return nil, fmt.Errorf("migrations %q and %q share version %d", prev, name, version)
		}
		seen[version] = name
		text, err := fs.ReadFile(files, path.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("read migration %q: %w", name, err)
		}
		stmts := Split(string(text))
		if len(stmts) == 0 {
			return nil, fmt.Errorf("migration %q has no statements", name)
		}
		ms = append(ms, Migration{Version: version, Name: rest, Statements: stmts})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

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

// Names of the queries in queries/, for Query.
const (
	PageCount              = "page_count"               // params site, page → views, uniques
	PageCounts             = "page_counts"              // params site, pages (Array(String)) → page, views, uniques
	SiteCount              = "site_count"               // params site → views, uniques
	TopPages               = "top_pages"                // params since, limit → site, page: the most viewed since
	Reasons                = "reasons"                  // params site → verdict, views
	InvalidByDay           = "invalid_by_day"           // params site, from, to (DateTime64, whole hours) → day, verdict, events, from dim_rollup
	InvalidASNs            = "invalid_asns"             // params site, from, to → asn, events: the top 20 networks of datacenter views (rejected_rollup)
	InvalidTopAgents       = "invalid_top_agents"       // params site, from, to, limit → verdict, ua, ua_cut, ua_browser, ua_device, events: the top user agents per reason (rejected_rollup)
	InvalidTopClasses      = "invalid_top_classes"      // params site, from, to, limit → verdict, browser, device, events: the top browser/device classes per reason (rejected_rollup)
	InvalidOrigins         = "invalid_origins"          // params site, from, to → origin, events: the top 20 page hosts of foreign_origin views (rejected_rollup)
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
	FeedProgress           = "feed_progress"            // → partition, first, last, since of each partition's latest feed
	FeedBacklog            = "feed_backlog"             // params fed (Map(UInt16, UInt64)) → partition, last, rows
	FeedNextBatch          = "feed_next_batch"          // → a batch number above every one stored or fed
	RuleVersions           = "rule_versions"            // → rules, events, valid, first, last per rule set version
	RevalidateRecord       = "revalidate_record"        // params id, state, site, from, to, rules, who, judged, changed
	RevalidateStored       = "revalidate_stored"        // params site, partition, from, to → seq, idx, verdict, page, rules
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
// rollup.MigrateCluster); '{cluster}' in them is put through OnCluster.
const (
	ClusterCheck             = "cluster_check"              // params cluster → hosts, replicas, foreground, quorum, db
	ClusterDatabase          = "cluster_database"           // params db (Identifier): creates it on every host
	ClusterMigrationsInit    = "cluster_migrations_init"    // creates cluster_migrations on every host
	ClusterMigrationsApplied = "cluster_migrations_applied" // → version
	ClusterMigrationsRecord  = "cluster_migrations_record"  // params version, name
	RawRetentionSetCluster   = "raw_retention_set_cluster"  // params table (Identifier, a _local table), days
)

// Cluster returns the cluster schema (cluster/NNN_name.sql: the state
// migrations/ leave, as ON CLUSTER DDL of Replicated local tables and
// Distributed tables over them) for the cluster named cluster, each
// statement put through OnCluster.
func Cluster(cluster string) ([]Migration, error) {
	ms, err := readMigrations("cluster")
	if err != nil {
		return nil, err
	}
	for i := range ms {
		for j, st := range ms[i].Statements {
			if ms[i].Statements[j], err = OnCluster(st, cluster); err != nil {
				return nil, err
			}
		}
	}
	return ms, nil
}

// ErrClusterName is returned (wrapped) for a cluster name that is not a
// plain name.
var ErrClusterName = errors.New("cluster name: want letters, digits, '_', '-' or '.'")

var clusterName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// OnCluster puts the cluster's name where a statement says '{cluster}'
// (ON CLUSTER '{cluster}', Distributed('{cluster}', …)). It is the one
// place Go writes into SQL text: ClickHouse binds no parameter in ON
// CLUSTER, and the name is checked to be a plain name first, so it cannot
// leave its quotes. {shard} and {replica} are left to the servers' macros.
func OnCluster(stmt, cluster string) (string, error) {
	if !clusterName.MatchString(cluster) {
		return "", fmt.Errorf("%w: %q", ErrClusterName, cluster)
	}
	return strings.ReplaceAll(stmt, "'{cluster}'", "'"+cluster+"'"), nil
}

// Query returns the named query from queries/NAME.sql. Names are constants
// in the code that uses them, so an unknown name is a programming error and
// panics; a test loads every name in use.
func Query(name string) string {
	text, err := fs.ReadFile(files, path.Join("queries", name+".sql"))
	if err != nil {
		panic(fmt.Sprintf("sql: unknown query %q", name))
	}
	return strings.TrimSpace(string(text))
}

// Repair returns the statements of the repair script repair/NAME.sql, in
// order. The scripts rebuild and recount one rollup each (see package
// rollup); an unknown name is a programming error and panics.
func Repair(name string) []string {
	text, err := fs.ReadFile(files, path.Join("repair", name+".sql"))
	if err != nil {
		panic(fmt.Sprintf("sql: unknown repair script %q", name))
	}
	return Split(string(text))
}

// Queries lists the names Query accepts.
func Queries() []string { return names("queries") }

// Example returns the analyst example examples/NAME.sql, comment header
// included, and whether it exists.
func Example(name string) (string, bool) {
	text, err := fs.ReadFile(files, path.Join("examples", name+".sql"))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(text)), true
}

// Examples lists the names Example accepts.
func Examples() []string { return names("examples") }

func names(dir string) []string {
	entries, err := fs.ReadDir(files, dir)
	if err != nil {
		panic(fmt.Sprintf("sql: embedded %s missing: %v", dir, err))
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".sql"))
	}
	return out
}
