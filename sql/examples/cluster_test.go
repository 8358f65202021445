package examples_test

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/examples"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// A cluster cannot run here (no Keeper, no second server), so the cluster
// schema is tested in two steps. Every statement must parse as ClickHouse
// parses it (EXPLAIN AST, which parses and runs nothing), ON CLUSTER and
// Replicated engines included; and the schema must build the single-node
// tables: with ON CLUSTER dropped, each Replicated engine replaced by the
// engine it replicates (its Keeper path and {shard}/{replica} macros with
// it) and each Distributed table by a Merge table over its local table
// (the same columns, readable, as a Distributed table over one shard), it
// runs on chDB, and its tables must match the migrations' column for
// column, key for key. A migration that changes a table without a file in
// sql/migrations/cluster fails here.

const testCluster = "vc_cluster"

func TestClusterParses(t *testing.T) {
	ctx := context.Background()
	s := storetest.Open(t)
	ms, err := migrations.Cluster(testCluster)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].Version != 1 {
		t.Fatalf("cluster migrations %v: want 001 first", ms)
	}
	var stmts []string
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("cluster/%03d_%s: versions must run 1, 2, 3… without gaps", m.Version, m.Name)
		}
		stmts = append(stmts, m.Statements...)
	}
	for _, q := range []string{queries.ClusterDatabase, queries.ClusterMigrationsInit, queries.RawRetentionSetCluster} {
		st, err := migrations.OnCluster(queries.Text(q), testCluster)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, st)
	}
	params := store.Params{"db": "viewcount", "table": "views_raw_local", "days": "400"}
	replicated := regexp.MustCompile(`ENGINE = Replicated\w*MergeTree\('/clickhouse/tables/(\{shard\}|all)/\{database\}/\w+', '(\{shard\}-)?\{replica\}'\)`)
	for _, st := range stmts {
		if _, err := s.Query(ctx, "EXPLAIN AST "+st, params); err != nil {
			t.Errorf("does not parse: %v\n%s", err, st)
		}
		if strings.Contains(st, "{cluster}") || !strings.Contains(st, "ON CLUSTER '"+testCluster+"'") {
			t.Errorf("want ON CLUSTER '%s' and no '{cluster}' left: %.80q", testCluster, st)
		}
		// A view replaced (cluster 007) is dropped first: IF EXISTS. Setting
		// a table setting sets the same value again, and materializing a
		// projection (cluster 009) builds it again.
		if !strings.Contains(st, "IF NOT EXISTS") && !strings.Contains(st, "MODIFY TTL") && !strings.Contains(st, "MODIFY SETTING") &&
			!strings.Contains(st, "MATERIALIZE PROJECTION IF EXISTS") && !strings.HasPrefix(st, "DROP VIEW IF EXISTS ") {
			t.Errorf("not rerunnable (IF NOT EXISTS): %.80q", st)
		}
		create, _, _ := strings.Cut(st, "(")
		switch {
		case !strings.Contains(create, "CREATE TABLE"), strings.Contains(st, "ENGINE = Null"):
		case strings.Contains(create, "_local ON CLUSTER") || strings.Contains(create, "cluster_migrations"):
			if !replicated.MatchString(st) || !strings.Contains(st, "replicated_deduplication_window") && !strings.Contains(st, "cluster_migrations") {
				t.Errorf("a stored table must be Replicated under /clickhouse/tables/{shard}/{database}/<name> with a deduplication window: %.80q", st)
			}
		default:
			m := distributedTable.FindStringSubmatch(regexp.MustCompile(`(?m)^--.*\n`).ReplaceAllString(st, ""))
			if m == nil || m[1] != m[2] {
				t.Errorf("a table that is not _local must be Distributed over its _local table, with a sharding key: %.80q", st)
			}
		}
	}
	if _, err := migrations.OnCluster("x", "a'b"); err == nil {
		t.Error("OnCluster took a cluster name with a quote")
	}
}

var (
	distributedTable = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS (\w+) ON CLUSTER '` + testCluster + `'\n\(.*\)\nENGINE = Distributed\('` +
		testCluster + `', currentDatabase\(\), (\w+)_local, [^\n]+\)$`)
	onClusterClause  = regexp.MustCompile(` ON CLUSTER '[^']*'`)
	replicatedEngine = regexp.MustCompile(`Replicated(\w*MergeTree)\('[^']*', '[^']*'\)`)
	distributedOver  = regexp.MustCompile(`Distributed\('[^']*', currentDatabase\(\), (\w+), .+\)`)
)

// localized is a cluster statement as one host without Keeper can run it.
func localized(st string) string {
	st = onClusterClause.ReplaceAllString(st, "")
	st = replicatedEngine.ReplaceAllString(st, "$1")
	return distributedOver.ReplaceAllString(st, "Merge(currentDatabase(), '^${1}$$')")
}

func TestClusterSchema(t *testing.T) {
	ctx := context.Background()
	single, cl := storetest.Open(t), storetest.Open(t)
	if err := migrations.Apply(ctx, single, nil); err != nil {
		t.Fatal(err)
	}
	ms, err := migrations.Cluster(testCluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		for _, st := range m.Statements {
			st = localized(st)
			if code := regexp.MustCompile(`(?m)^--.*$`).ReplaceAllString(st, ""); strings.Contains(code, "{") {
				t.Errorf("a macro is left: %.80q", st)
			}
			if err := cl.Exec(ctx, st, nil); err != nil {
				t.Fatalf("%v\n%s", err, st)
			}
		}
	}

	want, got := schemaOf(t, single), schemaOf(t, cl)
	delete(want, "schema_migrations") // the cluster records its own, in cluster_migrations
	for name, w := range want {
		stored := got[name+"_local"]
		if stored == nil {
			stored = got[name]
		} else if g := got[name]; g == nil || !reflect.DeepEqual(withoutCodecs(g.columns), withoutCodecs(w.columns)) {
			t.Errorf("%s (Distributed): columns differ from the single-node table's (codecs aside: it stores nothing)", name)
		}
		if stored == nil {
			t.Errorf("%s: not in the cluster schema", name)
			continue
		}
		if !reflect.DeepEqual(stored.columns, w.columns) {
			t.Errorf("%s: columns differ\ncluster:     %q\nsingle node: %q", name, stored.columns, w.columns)
		}
		if !reflect.DeepEqual(stored.table, w.table) {
			t.Errorf("%s: engine, keys or settings differ\ncluster:     %q\nsingle node: %q", name, stored.table, w.table)
		}
	}
	for name := range got {
		if _, ok := want[strings.TrimSuffix(name, "_local")]; !ok {
			t.Errorf("%s: in the cluster schema, not in the migrations", name)
		}
	}

	// The same events through both schemas: the cluster's materialized
	// views fill the same rollups, and every example (read through the
	// Distributed tables' names) answers the same. Engagement reports and
	// visit deltas beside them fill engagement_rollup.
	events := exampleEvents()
	reports := engagementEvents(events) // and the views' deltas, in place
	storetest.Insert(t, single, "", append(slices.Clone(events), reports...))
	db, err := single.Query(ctx, "SELECT currentDatabase()", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Test-only SQL: the database name is the test's own; the feed's
	// insert as queries/feed.sql makes it, without its bounds.
	if err := cl.Exec(ctx, "INSERT INTO views_raw_local SELECT * FROM `"+db.TextRows()[0][0]+"`.views_raw", nil); err != nil {
		t.Fatal(err)
	}
	if err := cl.Exec(ctx, "INSERT INTO views_feed_local SELECT time, site, page, visitor, verdict, utm_source, utm_medium, utm_campaign, "+
		"country, ref_host, ref_source, browser, os, device, screen, ua, asn, origin, "+
		"kind, visit_set, view_time, visit_start, entry_page, entry_ref_host, entry_ref_source, entry_utm_source, entry_utm_medium, "+
		"entry_utm_campaign, prev_page, d_visits, d_bounces, d_visit_ms, d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to "+
		"FROM views_raw_local ORDER BY seq, idx", nil); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT grain, site, page, bucket, sum(views), uniqCombined64Merge(uniques) FROM page_rollup GROUP BY ALL ORDER BY ALL",
		"SELECT grain, site, dim, page, value, bucket, sum(views), uniqCombined64Merge(12)(uniques) FROM dim_rollup GROUP BY ALL ORDER BY ALL",
		"SELECT * FROM page_views ORDER BY ALL",
		"SELECT site, verdict, time, ua, ua_cut, browser, device, asn, origin, sum(events), max(last) FROM rejected_rollup GROUP BY ALL ORDER BY ALL",
		"SELECT grain, site, dim, value, bucket, sum(engagements), sum(engaged_ms), toString(sumMap(engaged_hist)), toString(sumMap(scroll_hist)), " +
			"sum(visits), sum(bounces), sum(visit_ms), sum(exits), sum(rejected) FROM engagement_rollup GROUP BY ALL ORDER BY ALL",
	} {
		sameRows(t, single, cl, q, nil)
	}
	for name, c := range exampleCases(events) {
		q, _ := examples.Text(name)
		sameRows(t, single, cl, q, c.params)
	}
}

// engagementEvents gives the valid views of events a visit delta (each
// its own one-view visit, a bounce) and adds an accepted engagement report
// for every other one, a rejected one for every fifth, all after events'
// sequences: enough to fill every kind of engagement_rollup row.
func engagementEvents(events []viewcount.Verdict) []viewcount.Verdict {
	var out []viewcount.Verdict
	seq := uint64(len(events) + 1)
	for i := range events {
		v := &events[i]
		if v.Reason != viewcount.Valid {
			continue
		}
		v.Visit = viewcount.VisitDelta{Set: true, ViewTime: v.Time, VisitStart: v.Time, EntryPage: v.Page,
			EntryRefHost: v.Dims.RefHost, EntryRefSource: v.Dims.RefSource, EntryUTM: v.UTM,
			Visits: 1, Bounces: 1, EngagedFrom: -1, EngagedTo: -1, ScrollFrom: -1, ScrollTo: -1}
		if i%2 == 0 {
			e := *v
			e.Kind, e.ID, e.Seq, e.Time = viewcount.KindEngagement, v.ID+"-e", seq, v.Time.Add(time.Duration(i%50)*time.Second)
			e.Engagement = viewcount.Engagement{EngagedMS: uint32(i%50) * 1000, Scroll: uint8(i % 101)}
			e.Visit = viewcount.VisitDelta{Set: true, ViewTime: v.Time, VisitStart: v.Time, EntryPage: v.Page,
				EntryRefHost: v.Dims.RefHost, EntryRefSource: v.Dims.RefSource, EntryUTM: v.UTM,
				VisitMS: int32(i%50) * 1000, EngagedMS: int32(i%50) * 1000,
				EngagedFrom: -1, EngagedTo: viewcount.EngagedBucket(uint32(i%50) * 1000), ScrollFrom: -1, ScrollTo: viewcount.ScrollBucket(uint8(i % 101))}
			if i%50 >= 10 {
				e.Visit.Bounces = -1
			}
			if i%5 == 0 {
				e.Reason, e.Visit = viewcount.EngagementRepeat, viewcount.VisitDelta{}
			}
			out = append(out, e)
			seq++
		}
	}
	return out
}

// sameRows runs q on both stores and wants the same rows, and some.
func sameRows(t *testing.T, a, b store.Store, q string, p store.Params) {
	t.Helper()
	ra, err := a.Query(context.Background(), q, p)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.Query(context.Background(), q, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(ra.TextRows()) == 0 || !reflect.DeepEqual(ra.TextRows(), rb.TextRows()) {
		t.Errorf("%.60q: single node %d rows, cluster schema %d rows, or they differ", q, len(ra.TextRows()), len(rb.TextRows()))
	}
}

// tableSchema is what must match between a single-node table and its
// cluster counterpart: its columns (name, type, default, codec, in
// order), and its engine, keys, TTL, skip indexes and settings, but for
// the deduplication windows (the replicated ones replace the others).
type tableSchema struct {
	columns [][]string
	table   []string
}

func schemaOf(t *testing.T, s store.Store) map[string]*tableSchema {
	t.Helper()
	ctx := context.Background()
	out := map[string]*tableSchema{}
	// Test-only SQL: the system tables of the store's own database.
	tables, err := s.Query(ctx, "SELECT name, engine_full, sorting_key, partition_key, primary_key, as_select, database FROM system.tables WHERE database = currentDatabase()", nil)
	if err != nil {
		t.Fatal(err)
	}
	dedup := regexp.MustCompile(`(non_)?replicated_deduplication_window(_seconds)? = \d+(, )?`)
	for _, r := range tables.TextRows() {
		engine := r[1]
		if strings.HasPrefix(engine, "Merge(") { // a Distributed table's stand-in
			engine = ""
		}
		engine = strings.TrimSuffix(dedup.ReplaceAllString(engine, ""), ", ")
		engine = strings.TrimSuffix(engine, " SETTINGS")
		engine = settingsSorted(engine)
		// A view's query names its tables; the cluster's read _local ones.
		sel := strings.ReplaceAll(strings.ReplaceAll(r[5], r[6]+".", ""), "_local", "")
		out[r[0]] = &tableSchema{table: []string{engine, r[2], r[3], r[4], sel}}
	}
	cols, err := s.Query(ctx, "SELECT table, name, type, default_kind, default_expression, compression_codec FROM system.columns WHERE database = currentDatabase() ORDER BY table, position", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cols.TextRows() {
		if ts := out[r[0]]; ts != nil {
			ts.columns = append(ts.columns, r[1:])
		}
	}
	idx, err := s.Query(ctx, "SELECT table, name, type_full, expr, granularity FROM system.data_skipping_indices WHERE database = currentDatabase() ORDER BY table, name", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range idx.TextRows() {
		if ts := out[r[0]]; ts != nil {
			ts.table = append(ts.table, strings.Join(r[1:], " "))
		}
	}
	return out
}

// withoutCodecs is columns with their compression codecs blanked.
func withoutCodecs(columns [][]string) [][]string {
	out := make([][]string, len(columns))
	for i, c := range columns {
		out[i] = append(slices.Clone(c[:len(c)-1]), "")
	}
	return out
}

// settingsSorted sorts the SETTINGS of an engine_full, whose order follows
// the statements that set them.
func settingsSorted(engine string) string {
	head, settings, ok := strings.Cut(engine, " SETTINGS ")
	if !ok {
		return engine
	}
	list := strings.Split(settings, ", ")
	slices.Sort(list)
	return head + " SETTINGS " + strings.Join(slices.Compact(list), ", ")
}
