package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// One chDB engine under a temp dir for the whole test binary; every test
// gets its own database on it.
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// openTestStore returns an embedded store on a fresh database.
func openTestStore(t testing.TB) store.Store { return storetest.Open(t) }

// backend opens a fresh, empty store of one kind.
type backend struct {
	name string
	open func(testing.TB) store.Store
}

// backends lists the adapters every contract test runs against: chDB always,
// a ClickHouse server when CLICKHOUSE_TEST_DSN names one.
func backends() []backend {
	return []backend{{"chdb", openTestStore}, {"clickhouse", openServerStore}}
}

// each runs f as a subtest for every backend.
func each(t *testing.T, f func(t *testing.T, open func(testing.TB) store.Store)) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { f(t, b.open) })
	}
}

var serverDBs struct {
	sync.Mutex
	n int
}

// openServerStore opens a fresh database on the server CLICKHOUSE_TEST_DSN
// names, dropped when the test ends.
func openServerStore(t testing.TB) store.Store {
	t.Helper()
	dsn := os.Getenv("CLICKHOUSE_TEST_DSN")
	if dsn == "" {
		t.Skip("CLICKHOUSE_TEST_DSN not set: skipping the ClickHouse server adapter (e.g. clickhouse://default:@127.0.0.1:9000/default)")
	}
	serverDBs.Lock()
	serverDBs.n++
	db := fmt.Sprintf("vc_test_%d_%d", time.Now().UnixNano(), serverDBs.n)
	serverDBs.Unlock()
	s, err := store.Open(t.Context(), store.Config{DSN: dsn, Database: db}, nil)
	if err != nil {
		t.Fatalf("open ClickHouse: %v", err)
	}
	t.Cleanup(func() {
		_ = s.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+db+"` SYNC", nil)
		_ = s.Close()
	})
	return s
}

// migrated opens a fresh store with the schema applied.
func migrated(t testing.TB, open func(testing.TB) store.Store) store.Store {
	t.Helper()
	s := open(t)
	if err := migrations.Apply(t.Context(), s, nil); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return s
}

func mustQuery(t testing.TB, s store.Store, q string, p store.Params) *store.Result {
	t.Helper()
	res, err := s.Query(t.Context(), q, p)
	if err != nil {
		t.Fatalf("query %.80q: %v", q, err)
	}
	return res
}

func mustExec(t testing.TB, s store.Store, q string, p store.Params) {
	t.Helper()
	if err := s.Exec(t.Context(), q, p); err != nil {
		t.Fatalf("exec %.80q: %v", q, err)
	}
}

// one returns the only cell of a one-row, one-column result.
func one(t testing.TB, s store.Store, q string, p store.Params) string {
	t.Helper()
	res := mustQuery(t, s, q, p)
	if len(res.TextRows()) != 1 || len(res.TextRows()[0]) != 1 {
		t.Fatalf("query %.80q: want one cell, got %q", q, res.TextRows())
	}
	return res.TextRows()[0][0]
}

func u64(t testing.TB, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return n
}

var tricky = []string{
	"",
	"plain",
	"tab\there",
	"new\nline",
	"cr\r\nlf",
	`back\slash`,
	`\N`,
	`\\N`,
	"it's \"quoted\"",
	"{site:String} {}",
	"ünïcødé ✓ 日本語 🚀",
	"nul\x00byte",
	"trailing\\",
	"\b\f\a\v",
	"'); DROP TABLE t; --",
}

func TestRoundTrip(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := open(t)
		mustExec(t, s, "CREATE TABLE rt (i UInt32, s String, n Nullable(String), u UInt64, f Float64, b Bool, d DateTime64(3, 'UTC'), a Array(String)) ENGINE = MergeTree ORDER BY i", nil)
		for i, v := range tricky {
			mustExec(t, s, "INSERT INTO rt SELECT {i:UInt32}, {s:String}, NULL, 18446744073709551615, 0.25, true, '2024-02-29 23:59:58.123', [{s:String}, 'x']",
				store.Params{"i": strconv.Itoa(i), "s": v})
		}
		res := mustQuery(t, s, "SELECT i, s, n, u, f, b, d, a, length(s) AS len FROM rt ORDER BY i", nil)
		want := []string{"i", "s", "n", "u", "f", "b", "d", "a", "len"}
		if strings.Join(res.Columns, ",") != strings.Join(want, ",") {
			t.Fatalf("columns = %q, want %q", res.Columns, want)
		}
		if len(res.TextRows()) != len(tricky) {
			t.Fatalf("got %d rows, want %d", len(res.TextRows()), len(tricky))
		}
		for i, row := range res.TextRows() {
			if row[0] != strconv.Itoa(i) || row[1] != tricky[i] || row[8] != strconv.Itoa(len(tricky[i])) {
				t.Errorf("row %d: got i=%q s=%q len=%s, want s=%q", i, row[0], row[1], row[8], tricky[i])
			}
			if got := row[2:7]; strings.Join(got, "|") != `\N|18446744073709551615|0.25|true|2024-02-29 23:59:58.123` {
				t.Errorf("row %d: n,u,f,b,d = %q", i, got)
			}
		}
		if got := res.TextRows()[1][7]; got != "['plain','x']" {
			t.Errorf("array cell = %q", got)
		}
		// A statement with no rows still names its columns.
		empty := mustQuery(t, s, "SELECT s FROM rt WHERE i > 1000", nil)
		if len(empty.Columns) != 1 || len(empty.TextRows()) != 0 {
			t.Errorf("empty result = %+v", empty)
		}
	})
}

func TestParamsAreNotInterpolated(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := open(t)
		for _, v := range tricky {
			got := one(t, s, "SELECT {v:String} AS v", store.Params{"v": v})
			if got != v {
				t.Errorf("param %q came back as %q", v, got)
			}
		}
		// A value shaped like SQL or like a placeholder stays a value.
		got := one(t, s, "SELECT concat({a:String}, '|', {b:String})", store.Params{"a": "{b:String}", "b": "x' OR '1'='1"})
		if got != "{b:String}|x' OR '1'='1" {
			t.Errorf("got %q", got)
		}
		if _, err := s.Query(t.Context(), "SELECT {n:UInt8}", store.Params{"n": "1; DROP DATABASE x"}); err == nil {
			t.Error("a non-number bound to UInt8 was accepted")
		}
		if _, err := s.Query(t.Context(), "SELECT {missing:String}", nil); err == nil {
			t.Error("a missing parameter was accepted")
		}
	})
}

func TestMigrateIdempotent(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := open(t)
		for range 2 {
			if err := migrations.Apply(t.Context(), s, nil); err != nil {
				t.Fatalf("migrate: %v", err)
			}
		}
		ms, err := migrations.All()
		if err != nil {
			t.Fatal(err)
		}
		if got := one(t, s, "SELECT count() FROM schema_migrations", nil); got != strconv.Itoa(len(ms)) {
			t.Errorf("schema_migrations has %s rows, want %d", got, len(ms))
		}
		res := mustQuery(t, s, "SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name", nil)
		var tables []string
		for _, r := range res.TextRows() {
			tables = append(tables, r[0])
		}
		want := "corrections,dim_rollup,dim_rollup_mv,engagement_rollup,engagement_rollup_mv,page_day,page_hour,page_minute,page_rollup,page_rollup_mv,page_total,page_views,page_views_mv,rejected_rollup,rejected_rollup_mv,revalidations,rollup_feed,schema_migrations,views_feed,views_raw"
		if strings.Join(tables, ",") != want {
			t.Errorf("tables = %s\nwant     %s", strings.Join(tables, ","), want)
		}
	})
}

// fixture is a deterministic batch of verdicts and what the rollups must say.
type fixture struct {
	rows     []viewcount.Verdict
	views    map[string]uint64              // valid views per site|page
	visitors map[string]map[uint64]struct{} // distinct valid visitors per site|page
	site     map[string]map[uint64]struct{} // distinct valid visitors per site
	reasons  map[string]uint64              // rows per verdict for site a.example
}

func makeFixture(n int, seed uint64, start time.Time) *fixture {
	return makeFixtureSpan(n, seed, start, 3*time.Hour)
}

// makeFixtureSpan is makeFixture with events spread over span from start.
func makeFixtureSpan(n int, seed uint64, start time.Time, span time.Duration) *fixture {
	rng := rand.New(rand.NewPCG(seed, 1))
	f := &fixture{
		views:    map[string]uint64{},
		visitors: map[string]map[uint64]struct{}{},
		site:     map[string]map[uint64]struct{}{},
		reasons:  map[string]uint64{},
	}
	sites := []string{"a.example", "b.example"}
	for i := range n {
		site := sites[rng.IntN(len(sites))]
		page := "/p/" + strconv.Itoa(rng.IntN(12))
		reason := viewcount.Valid
		if rng.IntN(10) < 3 {
			reason = viewcount.Reasons[1+rng.IntN(len(viewcount.Reasons)-1)]
		}
		v := viewcount.Verdict{
			Event: viewcount.Event{
				Time:       start.Add(time.Duration(rng.Int64N(span.Milliseconds())) * time.Millisecond),
				Site:       site,
				Page:       page,
				Referrer:   "https://ref.example/" + strconv.Itoa(rng.IntN(5)),
				UA:         "Mozilla/5.0 (test)\t" + strconv.Itoa(rng.IntN(3)),
				ID:         fmt.Sprintf("ev-%d-%d", seed, i),
				Visitor:    rng.Uint64N(1500) * 0x9E3779B97F4A7C15,
				Network:    rng.Uint64(),
				Webdriver:  reason == viewcount.Headless,
				Source:     viewcount.Source(1 + rng.IntN(2)),
				Datacenter: reason == viewcount.Datacenter,
				Hints: viewcount.Hints{Present: i%3 != 0, ScreenW: uint16(rng.IntN(4000)), ScreenH: uint16(rng.IntN(3000)),
					Languages: uint8(rng.IntN(5)), TZ: i%2 == 0, UAData: i%5 == 0, Secure: i%7 != 0},
				Headers: viewcount.HeaderFlags(i * 37 % 512), ASN: uint32(i * 7919),
				Origin: [...]string{"", "www.a.example", "fraud.test"}[i%3],
			},
			Reason:    reason,
			Partition: uint16(rng.IntN(8)),
			Seq:       uint64(1000 + i/10),
			Index:     uint32(i % 10),
		}
		f.rows = append(f.rows, v)
		if site == "a.example" {
			f.reasons[string(reason)]++
		}
		if reason != viewcount.Valid {
			continue
		}
		key := site + "|" + page
		f.views[key]++
		if f.visitors[key] == nil {
			f.visitors[key] = map[uint64]struct{}{}
		}
		f.visitors[key][v.Visitor] = struct{}{}
		if f.site[site] == nil {
			f.site[site] = map[uint64]struct{}{}
		}
		f.site[site][v.Visitor] = struct{}{}
	}
	return f
}

// near reports whether an estimate is within 2% of the exact count.
func near(est, exact uint64) bool {
	d := float64(est) - float64(exact)
	return d*d <= 0.0004*float64(exact)*float64(exact)
}

func TestInsertViewsRollups(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := migrated(t, open)
		start := time.Date(2026, 3, 1, 22, 30, 0, 0, time.UTC) // spans two days
		f := makeFixture(4000, 1, start)
		if err := storetest.InsertFed(t.Context(), s, "p0:1000-1399", f.rows); err != nil {
			t.Fatalf("insert: %v", err)
		}
		if got := one(t, s, "SELECT count() FROM views_raw", nil); got != "4000" {
			t.Fatalf("views_raw has %s rows, want 4000", got)
		}
		for key, views := range f.views {
			site, page, _ := strings.Cut(key, "|")
			p := store.Params{"site": site, "page": page}
			res := mustQuery(t, s, queries.Text(queries.PageCount), p)
			if strings.Join(res.Columns, ",") != "views,uniques" || len(res.TextRows()) != 1 {
				t.Fatalf("page_count = %+v", res)
			}
			gotViews, gotUniques := u64(t, res.TextRows()[0][0]), u64(t, res.TextRows()[0][1])
			if gotViews != views {
				t.Errorf("%s: page_total views = %d, want %d", key, gotViews, views)
			}
			if exact := uint64(len(f.visitors[key])); !near(gotUniques, exact) {
				t.Errorf("%s: page_total uniques = %d, want about %d", key, gotUniques, exact)
			}
			for _, table := range []string{"page_minute", "page_hour", "page_day"} {
				got := u64(t, one(t, s, "SELECT toUInt64(sum(views)) FROM "+table+" WHERE site = {site:String} AND page = {page:String}", p))
				if got != views {
					t.Errorf("%s: %s views = %d, want %d", key, table, got, views)
				}
			}
		}
		for site, visitors := range f.site {
			var views uint64
			for key, v := range f.views {
				if strings.HasPrefix(key, site+"|") {
					views += v
				}
			}
			res := mustQuery(t, s, queries.Text(queries.SiteCount), store.Params{"site": site})
			if got := u64(t, res.TextRows()[0][0]); got != views {
				t.Errorf("%s: site views = %d, want %d", site, got, views)
			}
			if got := u64(t, res.TextRows()[0][1]); !near(got, uint64(len(visitors))) {
				t.Errorf("%s: site uniques = %d, want about %d", site, got, len(visitors))
			}
		}
		res := mustQuery(t, s, queries.Text(queries.Reasons), store.Params{"site": "a.example"})
		if len(res.TextRows()) != len(f.reasons) {
			t.Errorf("reasons = %q, want %v", res.TextRows(), f.reasons)
		}
		for _, r := range res.TextRows() {
			if got := u64(t, r[1]); got != f.reasons[r[0]] {
				t.Errorf("reason %s: %d rows, want %d", r[0], got, f.reasons[r[0]])
			}
		}
		// Minute buckets are minutes.
		if got := one(t, s, "SELECT countIf(toSecond(bucket) != 0) FROM page_minute", nil); got != "0" {
			t.Errorf("%s minute buckets are not on the minute", got)
		}
		// One row, field by field: the encoding puts every value in its column.
		want := f.rows[7]
		row := mustQuery(t, s, "SELECT time, site, page, referrer, ua, event_id, visitor, network, webdriver, "+
			"datacenter, hints_present, screen_w, screen_h, languages, tz, ua_data, secure_context, "+
			"source, verdict, partition, seq, idx, req_flags, asn, origin FROM views_raw WHERE event_id = {id:String}",
			store.Params{"id": want.ID}).TextRows()
		wantRow := []string{
			want.Time.UTC().Format("2006-01-02 15:04:05.000"), want.Site, want.Page, want.Referrer, want.UA, want.ID,
			strconv.FormatUint(want.Visitor, 10), strconv.FormatUint(want.Network, 10), strconv.FormatBool(want.Webdriver),
			strconv.FormatBool(want.Datacenter), strconv.FormatBool(want.Hints.Present), strconv.Itoa(int(want.Hints.ScreenW)),
			strconv.Itoa(int(want.Hints.ScreenH)), strconv.Itoa(int(want.Hints.Languages)), strconv.FormatBool(want.Hints.TZ),
			strconv.FormatBool(want.Hints.UAData), strconv.FormatBool(want.Hints.Secure),
			want.Source.String(), string(want.Reason), strconv.Itoa(int(want.Partition)), strconv.FormatUint(want.Seq, 10), strconv.Itoa(int(want.Index)),
			"259", "55433", "www.a.example", // f.rows[7]: 7*37 % 512, 7*7919, 7%3
		}
		if len(row) != 1 || strings.Join(row[0], "|") != strings.Join(wantRow, "|") {
			t.Errorf("row = %q\nwant  %q", row, wantRow)
		}
	})
}

// TestInsertViewsVisitColumns: migration 021's columns, read back as each
// adapter stored them: an accepted engagement report with its visit delta
// (negative deltas, a bucket of none), and a view the visit stage did not
// decide, whose zero delta is stored as the columns' defaults (no time,
// every bucket -1), as rows from before the migration read.
func TestInsertViewsVisitColumns(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := migrated(t, open)
		at := time.Date(2026, 3, 2, 0, 5, 0, 250_000_000, time.UTC)
		rows := []viewcount.Verdict{
			{Event: viewcount.Event{Time: at, Site: "v.example", Page: "/a", ID: "e1", Visitor: 1, Source: viewcount.SourceBeacon,
				Kind: viewcount.KindEngagement, Engagement: viewcount.Engagement{EngagedMS: 12_345, Scroll: 80, AgeMS: 400_000}},
				Reason: viewcount.Valid, Seq: 1,
				Visit: viewcount.VisitDelta{Set: true, ViewTime: at.Add(-400 * time.Second), VisitStart: at.Add(-500 * time.Second),
					EntryPage: "/in", EntryRefHost: "news.example", EntryRefSource: "News", EntryUTM: viewcount.UTM{Source: "nl", Medium: "email", Campaign: "may"},
					Visits: 0, Bounces: -1, VisitMS: 90_000, EngagedMS: 2_345, EngagedFrom: 10, EngagedTo: 11, ScrollFrom: -1, ScrollTo: 16}},
			{Event: viewcount.Event{Time: at, Site: "v.example", Page: "/b", ID: "e2", Visitor: 2, Source: viewcount.SourcePixel},
				Reason: viewcount.BotUA, Seq: 1, Index: 1},
		}
		if err := storetest.InsertFed(t.Context(), s, "", rows); err != nil {
			t.Fatal(err)
		}
		got := mustQuery(t, s, "SELECT kind, engaged_ms, scroll, age_ms, visit_set, view_time, visit_start, entry_page, entry_ref_host, "+
			"entry_ref_source, entry_utm_source, entry_utm_medium, entry_utm_campaign, prev_page, d_visits, d_bounces, d_visit_ms, "+
			"d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to FROM views_raw ORDER BY event_id", nil).TextRows()
		want := [][]string{
			{"1", "12345", "80", "400000", "true", "2026-03-01 23:58:20.250", "2026-03-01 23:56:40.250", "/in", "news.example",
				"News", "nl", "email", "may", "", "0", "-1", "90000", "2345", "10", "11", "-1", "16"},
			{"0", "0", "0", "0", "false", "1970-01-01 00:00:00.000", "1970-01-01 00:00:00.000", "", "",
				"", "", "", "", "", "0", "0", "0", "0", "-1", "-1", "-1", "-1"},
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("views_raw's visit columns\n got %q\nwant %q", got, want)
		}
	})
}

// snapshot is every count the dedup test compares.
func snapshot(t testing.TB, s store.Store) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("raw=" + one(t, s, "SELECT count() FROM views_raw", nil))
	for _, table := range []string{"page_minute", "page_hour", "page_day", "page_total"} {
		res := mustQuery(t, s, "SELECT toUInt64(sum(views)), toUInt64(uniqCombined64Merge(uniques)), count() FROM "+table, nil)
		fmt.Fprintf(&b, " %s=%s", table, strings.Join(res.TextRows()[0], "/"))
	}
	return b.String()
}

func TestInsertViewsDeduplicates(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := migrated(t, open)
		f := makeFixture(3000, 2, time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC))
		ctx := t.Context()
		if err := storetest.InsertFed(ctx, s, "p3:10-20", f.rows); err != nil {
			t.Fatal(err)
		}
		first := snapshot(t, s)
		// The same batch retried with the same token changes nothing,
		// in views_raw and in every rollup.
		for range 2 {
			if err := storetest.InsertFed(ctx, s, "p3:10-20", f.rows); err != nil {
				t.Fatalf("retry: %v", err)
			}
		}
		if got := snapshot(t, s); got != first {
			t.Errorf("retry with the same token changed counts:\nbefore %s\nafter  %s", first, got)
		}
		// A different token is a different batch.
		second := slices.Clone(f.rows)
		for i := range second {
			second[i].Batch = 0 // numbered anew
		}
		if err := storetest.InsertFed(ctx, s, "p3:21-31", second); err != nil {
			t.Fatal(err)
		}
		if got := one(t, s, "SELECT count() FROM views_raw", nil); got != "6000" {
			t.Errorf("after a second token views_raw has %s rows, want 6000", got)
		}
		var valid uint64
		for _, v := range f.views {
			valid += v
		}
		if got := u64(t, one(t, s, "SELECT toUInt64(sum(views)) FROM page_total", nil)); got != 2*valid {
			t.Errorf("page_total views = %d, want %d", got, 2*valid)
		}
		// An empty token means no deduplication token: plain insert.
		if err := s.InsertViews(ctx, "", f.rows[:10]); err != nil {
			t.Fatal(err)
		}
		if got := one(t, s, "SELECT count() FROM views_raw", nil); got != "6010" {
			t.Errorf("views_raw has %s rows, want 6010", got)
		}
		if err := s.InsertViews(ctx, "p3:empty", nil); err != nil {
			t.Errorf("empty insert: %v", err)
		}
	})
}

func TestInsertViewsBadToken(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := migrated(t, open)
		rows := makeFixture(5, 3, time.Now()).rows
		for _, tok := range []string{"a b", "x'y", "a\\b", "tok;DROP", "ü", "a\x00", strings.Repeat("x", 300)} {
			err := s.InsertViews(t.Context(), tok, rows)
			if !errors.Is(err, store.ErrBadToken) {
				t.Errorf("token %q: err = %v, want ErrBadToken", tok, err)
			}
		}
		if got := one(t, s, "SELECT count() FROM views_raw", nil); got != "0" {
			t.Errorf("bad tokens inserted %s rows", got)
		}
		if err := s.InsertViews(t.Context(), "Ok_1.2:3-4", rows); err != nil {
			t.Errorf("good token: %v", err)
		}
	})
}

func TestInsertViewsErrorKeepsStoreWorking(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := open(t) // no migrations: views_raw is missing
		rows := makeFixture(50, 4, time.Now()).rows
		err := s.InsertViews(t.Context(), "t1", rows)
		if err == nil || !strings.Contains(err.Error(), "views_raw") || !strings.HasPrefix(err.Error(), "store: insert") {
			t.Fatalf("insert into a missing table: err = %v", err)
		}
		if got := one(t, s, "SELECT 41 + 1", nil); got != "42" {
			t.Errorf("query after failed insert = %q", got)
		}
		if err := migrations.Apply(t.Context(), s, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertViews(t.Context(), "t1", rows); err != nil {
			t.Fatalf("insert after the failure: %v", err)
		}
		if got := one(t, s, "SELECT count() FROM views_raw", nil); got != "50" {
			t.Errorf("views_raw has %s rows, want 50", got)
		}
		// A broken query is an error and the connection stays usable.
		if _, err := s.Query(t.Context(), "SELEC nonsense", nil); err == nil {
			t.Error("syntax error not reported")
		}
		if err := s.Ping(t.Context()); err != nil {
			t.Errorf("ping after errors: %v", err)
		}
	})
}

func TestConcurrentUse(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := migrated(t, open)
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for w := range 4 {
			wg.Go(func() {
				f := makeFixture(500, uint64(10+w), time.Now())
				for b := range 3 {
					if err := s.InsertViews(t.Context(), fmt.Sprintf("w%d:%d", w, b), f.rows); err != nil {
						errs <- err
					}
				}
			})
			wg.Go(func() {
				for range 10 {
					if _, err := s.Query(t.Context(), queries.Text(queries.SiteCount), store.Params{"site": "a.example"}); err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got := one(t, s, "SELECT count() FROM views_raw", nil); got != "6000" {
			t.Errorf("views_raw has %s rows, want 6000", got)
		}
	})
}

func TestContextAndClose(t *testing.T) {
	each(t, func(t *testing.T, open func(testing.TB) store.Store) {
		s := open(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := s.Query(ctx, "SELECT 1", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("query with a canceled context: err = %v", err)
		}
	})
}

func TestChDBClosedStore(t *testing.T) {
	storetest.Open(t) // boots the shared engine
	s, err := store.Open(t.Context(), store.Config{DataDir: storetest.Dir(), Database: "closed_test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Ping(t.Context()); !errors.Is(err, store.ErrClosed) {
		t.Errorf("ping after close: %v", err)
	}
	if err := s.InsertViews(t.Context(), "x", makeFixture(1, 1, time.Now()).rows); !errors.Is(err, store.ErrClosed) {
		t.Errorf("insert after close: %v", err)
	}
}

func TestChDBOnePathPerProcess(t *testing.T) {
	storetest.Open(t)
	_, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir()}, nil)
	if err == nil || !strings.Contains(err.Error(), "one storage path") {
		t.Fatalf("second path: err = %v, want a clear error", err)
	}
	if _, err := store.Open(t.Context(), store.Config{DataDir: storetest.Dir(), Database: "bad-name"}, nil); err == nil {
		t.Error("a database name with '-' was accepted")
	}
	if _, err := store.Open(t.Context(), store.Config{}, nil); err == nil {
		t.Error("embedded store without a data dir was accepted")
	}
}

// The library loads once per process, so a missing library is tested in a
// fresh child process running this test alone.
func TestChDBNoLibrary(t *testing.T) {
	if os.Getenv("VIEWCOUNT_TEST_NOLIB_CHILD") == "1" {
		_, err := store.Open(t.Context(), store.Config{DataDir: t.TempDir(), LibPath: "/nonexistent/libchdb.so"}, nil)
		if !errors.Is(err, store.ErrNoLibrary) || !strings.Contains(err.Error(), "make chdb") || !strings.Contains(err.Error(), "CHDB_LIB_PATH") {
			t.Fatalf("err = %v, want ErrNoLibrary saying how to get it", err)
		}
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd := execSelf(t, "^TestChDBNoLibrary$", "VIEWCOUNT_TEST_NOLIB_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestChDBNoLibrary") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
