package migrations_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Migration 019 on a store with data: the rejected events the feed has
// taken are counted into rejected_rollup once, and those of each
// partition's latest recorded feed are left to the feed, which redoes it
// at the next start: on partition 0 that feed ran (the rollups before 019
// drop its repeat, the new view counts it), on partition 1 a crash cut it
// (every rollup counts it now). A crash right after the copy and a rerun
// copy nothing twice; then the rollup equals a recount of views_raw.
func TestMigrateRejectedRollupBackfills(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(ctx, queries.Text(queries.MigrationsInit), nil); err != nil {
		t.Fatal(err)
	}
	var m019 migrations.Migration
	for _, m := range ms {
		if m.Version == 19 {
			m019 = m
			continue
		}
		if m.Version > 19 {
			// Only the columns this binary's inserts and feed name; the
			// rest (021's views) comes with the upgrade, after 019.
			for _, st := range m.Statements {
				if strings.Contains(st, "ADD COLUMN") {
					if err := s.Exec(ctx, st, nil); err != nil {
						t.Fatalf("migration %d: %v", m.Version, err)
					}
				}
			}
			continue
		}
		for _, st := range m.Statements {
			if err := s.Exec(ctx, st, nil); err != nil {
				t.Fatalf("migration %d: %v", m.Version, err)
			}
		}
		if err := s.Exec(ctx, queries.Text(queries.MigrationsRecord), store.Params{"version": strconv.Itoa(m.Version), "name": m.Name}); err != nil {
			t.Fatal(err)
		}
	}
	if len(m019.Statements) < 4 || !strings.HasPrefix(m019.Statements[0], "-- rejected_rollup") {
		t.Fatalf("migration 019: %d statements, want the views_feed columns, the table, the copy and the view", len(m019.Statements))
	}
	// The feed of this binary names views_feed's new columns; the rows it
	// gives the rollups before 019 are the ones an older binary gave them.
	if err := s.Exec(ctx, m019.Statements[0], nil); err != nil {
		t.Fatal(err)
	}

	at := time.Date(2026, 10, 31, 22, 40, 0, 0, time.UTC)
	agents := []string{"curl/8.5.0", "python-requests/2.32", strings.Repeat("x", 350)}
	reasons := []viewcount.Reason{viewcount.Valid, viewcount.BotUA, viewcount.Datacenter, viewcount.ForeignOrigin}
	verdicts := func(token string, partition, n int) []viewcount.Verdict {
		vs := make([]viewcount.Verdict, n)
		for i := range vs {
			vs[i] = viewcount.Verdict{Event: viewcount.Event{Time: at.Add(time.Duration(i) * 7 * time.Minute), Site: "a.example", Page: "/",
				UA: agents[i%3], ID: token + strconv.Itoa(i), Visitor: uint64(i % 5), Source: viewcount.SourcePixel, ASN: []uint32{16509, 24940}[i%2], Origin: []string{"fraud.test", "localhost"}[i%2]},
				Reason: reasons[i%5%4], Partition: uint16(partition), Seq: uint64(i + 1), Dims: viewcount.Dims{Device: "other"}}
		}
		return vs
	}
	// Partition 0: two feeds, both run. Partition 1: one run, then a batch
	// stored and its feed recorded, not run.
	for _, b := range []struct {
		token     string
		partition int
	}{{"p0-a", 0}, {"p0-b", 0}, {"p1-a", 1}} {
		if err := storetest.InsertFed(ctx, s, b.token, verdicts(b.token, b.partition, 40)); err != nil {
			t.Fatal(err)
		}
	}
	cut := verdicts("p1-b", 1, 40)
	if err := storetest.NumberBatch(ctx, s, cut); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertViews(ctx, "p1-b", cut); err != nil {
		t.Fatal(err)
	}
	fed := queryCell(t, s, "SELECT max(last) FROM rollup_feed WHERE partition = 1")
	last, _ := strconv.ParseUint(fed, 10, 64)
	if err := feed.Record(ctx, s, feed.Range{Partition: 1, First: last + 1, Last: cut[0].Batch}); err != nil {
		t.Fatal(err)
	}
	rejected := func(q string) string {
		return queryCell(t, s, "SELECT toString(count()) FROM views_raw WHERE verdict != 'valid' AND "+q)
	}
	// What the feed has taken, less each partition's latest feed.
	firstP0 := queryCell(t, s, "SELECT argMax(first, last) FROM rollup_feed WHERE partition = 0")
	wantCopy := rejected("(partition = 0 AND batch < " + firstP0 + " OR partition = 1 AND batch <= " + fed + ")")
	all := rejected("1")
	if wantCopy == "0" || wantCopy == all {
		t.Fatalf("%s of %s rejected events to copy: the history tests nothing", wantCopy, all)
	}

	copyStmts := 0
	for i, st := range m019.Statements {
		if strings.Contains(st, "INSERT INTO rejected_rollup") {
			copyStmts = i + 1
		}
	}
	for _, st := range m019.Statements[:copyStmts] { // a crash right after the copy
		if err := s.Exec(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
	}
	stored := func() string { return queryCell(t, s, "SELECT toString(sum(events)) FROM rejected_rollup") }
	if got := stored(); got != wantCopy {
		t.Errorf("rejected_rollup after the copy counts %s events, want %s", got, wantCopy)
	}
	if err := migrations.Apply(ctx, s, nil); err != nil { // the rerun, the view, and the migrations after 019
		t.Fatal(err)
	}
	if got := stored(); got != wantCopy {
		t.Errorf("rejected_rollup after rerunning the migration counts %s events, want %s", got, wantCopy)
	}
	if _, err := feed.CatchUp(ctx, s); err != nil { // what a validator's start does
		t.Fatal(err)
	}
	if got := stored(); got != all {
		t.Errorf("rejected_rollup after the feeds are redone counts %s events, want all %s", got, all)
	}
	if got := queryCell(t, s, "SELECT max(length(ua)) FROM rejected_rollup"); got != "300" {
		t.Errorf("longest stored agent %s bytes, want 300", got)
	}
	if got := queryCell(t, s, "SELECT toString(groupUniqArray(asn)) FROM rejected_rollup WHERE verdict = 'bot_ua'"); got != "[0]" {
		t.Errorf("bot_ua rows keep AS numbers %s, want only datacenter verdicts'", got)
	}
	if got := queryCell(t, s, "SELECT toString(arraySort(groupUniqArray(origin))) FROM rejected_rollup WHERE verdict = 'foreign_origin'"); got != "['fraud.test','localhost']" {
		t.Errorf("foreign_origin rows keep page hosts %s, want fraud.test and localhost", got)
	}
	if got := queryCell(t, s, "SELECT toString(groupUniqArray(origin)) FROM rejected_rollup WHERE verdict != 'foreign_origin'"); got != "['']" {
		t.Errorf("other reasons' rows keep page hosts %s, want only foreign_origin verdicts'", got)
	}
	if d := recountDiffering(t, s, time.Now()); differingAll(d) != 0 {
		t.Errorf("recount after the upgrade = %v", d)
	}
}

func differingAll(d map[string]uint64) uint64 {
	var n uint64
	for _, v := range d {
		n += v
	}
	return n
}
