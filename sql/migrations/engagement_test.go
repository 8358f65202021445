package migrations_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Migration 021 on a store with data: views stored and fed before it read
// as views with no visit data (kind 0, visit_set false, every bucket -1),
// the recreated views of views leave every count as it was, a feed redone
// after the upgrade (what each partition's writer does when it starts)
// adds nothing to them, a rerun of the migration changes nothing, and a
// recount from views_raw agrees with every rollup, engagement_rollup
// (empty: nothing before the upgrade is an engagement) included.
func TestMigrateEngagementKeepsViews(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	ms := applyBefore(t, s, 21)
	var m021 migrations.Migration
	for _, m := range ms {
		if m.Version == 21 {
			m021 = m
		}
	}

	// Stored and fed as a binary before 021 did: views_raw's and
	// views_feed's columns of migration 020 (test-only SQL, the INSERTs of
	// that binary's store and feed.sql).
	at := time.Date(2026, 6, 30, 23, 58, 0, 0, time.UTC)
	var rows []string
	for i := range 30 {
		verdict := []string{"valid", "valid", "bot_ua"}[i%3]
		rows = append(rows, "('"+at.Add(time.Duration(i)*17*time.Second).Format("2006-01-02 15:04:05")+"', 'a.example', '/p"+strconv.Itoa(i%4)+
			"', 'Mozilla/5.0', 'e"+strconv.Itoa(i)+"', "+strconv.Itoa(i%7+1)+", '"+verdict+"', 'beacon', 0, "+strconv.Itoa(i/10+1)+", "+
			strconv.Itoa(i%10)+", "+strconv.Itoa(i/10+1)+", '"+[]string{"Firefox", "Chrome"}[i%2]+"', '"+[]string{"(direct)", "Google"}[i%5/3]+"')")
	}
	if err := s.Exec(ctx, "INSERT INTO views_raw (time, site, page, ua, event_id, visitor, verdict, source, partition, seq, idx, batch, browser, ref_source) VALUES "+
		strings.Join(rows, ", "), nil); err != nil {
		t.Fatal(err)
	}
	r := feed.Range{Partition: 0, First: 1, Last: 3}
	if err := feed.Record(ctx, s, r); err != nil {
		t.Fatal(err)
	}
	oldFeed := "INSERT INTO views_feed (time, site, page, visitor, verdict, utm_source, utm_medium, utm_campaign, country, " +
		"ref_host, ref_source, browser, os, device, screen, ua, asn, origin) " +
		"SETTINGS insert_deduplication_token = '" + r.Token() + "', insert_deduplicate = 1, deduplicate_blocks_in_dependent_materialized_views = 1, " +
		"max_threads = 1, max_insert_threads = 1 " +
		"SELECT time, site, page, visitor, verdict, utm_source, utm_medium, utm_campaign, country, " +
		"ref_host, ref_source, browser, os, device, screen, ua, asn, origin FROM views_raw ORDER BY seq, idx"
	if err := s.Exec(ctx, oldFeed, nil); err != nil {
		t.Fatal(err)
	}
	counts := func() string {
		t.Helper()
		var b strings.Builder
		for _, q := range []string{
			"SELECT grain, toUInt64(sum(views)), toUInt64(uniqCombined64Merge(uniques)), count() FROM page_rollup GROUP BY grain ORDER BY grain",
			// Migration 022's AS rows apart (checked below).
			"SELECT dim, grain, toUInt64(sum(views)), count() FROM dim_rollup WHERE dim != 'asn' GROUP BY dim, grain ORDER BY dim, grain",
			"SELECT toUInt64(count()) FROM page_views",
			"SELECT verdict, toUInt64(sum(events)) FROM rejected_rollup GROUP BY verdict ORDER BY verdict",
		} {
			res, err := s.Query(ctx, q, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, row := range res.TextRows() {
				b.WriteString(strings.Join(row, " ") + "\n")
			}
		}
		return b.String()
	}
	before := counts()
	if !strings.Contains(before, "total 20 ") || !strings.Contains(before, "bot_ua 10") {
		t.Fatalf("before the upgrade:\n%s\nwant 20 valid views and 10 bot_ua", before)
	}

	for range 2 { // the upgrade, then a rerun of its statements
		for _, st := range m021.Statements {
			if err := s.Exec(ctx, st, nil); err != nil {
				t.Fatal(err)
			}
		}
		if got := counts(); got != before {
			t.Errorf("after migration 021:\n%s\nwant as before:\n%s", got, before)
		}
	}
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	if got := queryCell(t, s, "SELECT toString(groupUniqArray((kind, engaged_ms, scroll, age_ms, visit_set, toUnixTimestamp64Milli(view_time), "+
		"toUnixTimestamp64Milli(visit_start), entry_page, prev_page, d_visits, d_bounces, d_visit_ms, d_engaged_ms, eng_from, eng_to, scroll_from, scroll_to))) FROM views_raw"); got != "[(0,0,0,0,false,0,0,'','',0,0,0,0,-1,-1,-1,-1)]" {
		t.Errorf("rows from before read %s, want views with no visit data", got)
	}
	// The writer's start redoes the partition's latest feed, now with
	// 021's feed.sql: the views drop its repeat.
	if err := feed.Copy(ctx, s, r); err != nil {
		t.Fatal(err)
	}
	if got := counts(); got != before {
		t.Errorf("after the feed redone:\n%s\nwant as before:\n%s", got, before)
	}
	// 022 gives the views fed before it their AS rows (all AS 0 here), once.
	if got := queryCell(t, s, "SELECT toString(groupArray((toString(grain), value, views))) FROM (SELECT grain, value, sum(views) AS views "+
		"FROM dim_rollup WHERE dim = 'asn' GROUP BY grain, value ORDER BY grain)"); got != "[('hour','0',20),('day','0',20)]" {
		t.Errorf("AS rows %s, want the 20 valid views as AS 0 at both grains", got)
	}
	if got := queryCell(t, s, "SELECT toString(count()) FROM engagement_rollup"); got != "0" {
		t.Errorf("engagement_rollup holds %s rows of views from before 021, want none", got)
	}
	if d := recountDiffering(t, s, time.Now()); differingAll(d) != 0 || d["engagement_rollup"] != 0 || len(d) != 5 {
		t.Errorf("recount after the upgrade = %v", d)
	}
}
