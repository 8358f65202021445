package migrations_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Migrations 010 and 011 on a store with data: the valid views already in
// views_raw are copied into page_views exactly once (a rerun, or a crash
// after the copy, adds nothing), 010's per-page rows are gone, the site's
// dim_rollup rows stay as they were, and new views reach page_views and
// page_rollup with the counts computed here.
func TestMigratePageViewsBackfills(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	ms, err := migrations.All()
	if err != nil {
		t.Fatal(err)
	}
	// apply runs the migrations up to upTo (only one when only is set),
	// the first stmts statements of each (all when 0).
	apply := func(upTo, only, stmts int) {
		t.Helper()
		for _, m := range ms {
			if m.Version > upTo || (only != 0 && m.Version != only) {
				continue
			}
			for i, st := range m.Statements {
				if stmts != 0 && i >= stmts {
					break
				}
				if err := s.Exec(ctx, st, nil); err != nil {
					t.Fatalf("migration %d: %v", m.Version, err)
				}
			}
		}
	}
	// want: page_views' rows and page_rollup's, counted here from the
	// inserted verdicts (every set has fewer than 128 ids: the sketch is
	// exact). pageViews is every valid view as a line.
	want := map[string]map[uint64]bool{}
	views := map[string]int{}
	var pageViews []string
	migrated := false // through 012: rows are fed
	insert := func(token string, n int, at time.Time) {
		t.Helper()
		vs := make([]viewcount.Verdict, n)
		for i := range vs {
			v := viewcount.Verdict{Event: viewcount.Event{Time: at.Add(time.Duration(i) * 97 * time.Second), Site: "a.example",
				Page: "/p" + strconv.Itoa(i%3), ID: token + strconv.Itoa(i), Visitor: uint64(i%11 + 1), Source: viewcount.SourcePixel,
				UTM:     viewcount.UTM{Source: []string{"", "news"}[i%2], Medium: []string{"", "email", "social"}[i%3], Campaign: []string{"", "launch"}[i%5/4]},
				Country: []string{"DE", "", "FR", "US"}[i%4]},
				Dims: viewcount.Dims{RefSource: []string{"(direct)", "Google", "news.example"}[i%3/2+i%2], Browser: []string{"Firefox", "Chrome"}[i%2],
					OS: []string{"Linux", "Windows", "iOS"}[i%3], Device: []string{"desktop", "mobile"}[i%7/5], Screen: []string{"", "laptop"}[i%2]},
				Reason: viewcount.Valid, Seq: uint64(i + 1)}
			v.Dims.RefHost = map[string]string{"(direct)": "", "Google": "www.google.com", "news.example": "news.example"}[v.Dims.RefSource]
			if i%6 == 5 {
				v.Reason = viewcount.BotUA // never in a breakdown
			}
			vs[i] = v
			if v.Reason != viewcount.Valid {
				continue
			}
			pageViews = append(pageViews, strings.Join([]string{v.Page, v.Time.Format(time.DateTime), strconv.FormatUint(v.Visitor, 10),
				v.Dims.RefSource, v.Dims.RefHost, v.UTM.Source, v.UTM.Medium, v.UTM.Campaign,
				v.Dims.Browser, v.Dims.OS, v.Dims.Device, v.Country, v.Dims.Screen}, " "))
			for grain, bucket := range map[string]time.Time{"minute": v.Time.Truncate(time.Minute), "hour": v.Time.Truncate(time.Hour),
				"day": v.Time.Truncate(24 * time.Hour), "total": time.Unix(0, 0).UTC()} {
				k := fmt.Sprintf("%s %s %s", v.Page, grain, bucket.Format(time.DateTime))
				if want[k] == nil {
					want[k] = map[uint64]bool{}
				}
				want[k][v.Visitor] = true
				views[k]++
			}
		}
		if err := insertAt(ctx, s, token, vs, migrated); err != nil {
			t.Fatal(err)
		}
	}
	wanted := func() string {
		lines := make([]string, 0, len(want))
		for k, ids := range want {
			lines = append(lines, fmt.Sprintf("%s %d/%d", k, views[k], len(ids)))
		}
		slices.Sort(lines)
		return strings.Join(lines, "\n")
	}
	lines := func(q string) string {
		t.Helper()
		res, err := s.Query(ctx, q, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(res.TextRows()))
		for i, r := range res.TextRows() {
			out[i] = r[0]
		}
		return strings.Join(out, "\n")
	}
	stored := func() string {
		t.Helper()
		return lines("SELECT arrayStringConcat([page, toString(time), toString(visitor), toString(ref_source), ref_host, toString(utm_source)," +
			" toString(utm_medium), utm_campaign, toString(browser), toString(os), toString(device), toString(country), toString(screen)], ' ') AS line" +
			" FROM page_views ORDER BY line")
	}
	sorted := func() string {
		l := slices.Clone(pageViews)
		slices.Sort(l)
		return strings.Join(l, "\n")
	}
	pageDims := "SELECT count() FROM dim_rollup WHERE dim = 'page_dims'"
	// The site's rows of 010, less the AS rows migration 022 adds.
	site := "SELECT concat(dim, ' ', page, ' \"', value, '\" ', toString(grain), ' ', toString(bucket), ' '," +
		" toString(sum(views)), '/', toString(uniqCombined64Merge(12)(uniques))) AS line FROM dim_rollup" +
		" WHERE dim NOT IN ('page_dims', 'asn') GROUP BY dim, page, value, grain, bucket ORDER BY line"
	pageRollup := "SELECT concat(page, ' ', toString(grain), ' ', toString(bucket), ' ', toString(sum(views)), '/'," +
		" toString(uniqCombined64Merge(uniques))) AS line FROM page_rollup GROUP BY page, grain, bucket ORDER BY line"

	at := time.Date(2026, 10, 31, 22, 30, 0, 0, time.UTC) // 200 views over 5.4 h: five hours, two days
	apply(10, 0, 0)
	addInsertColumns(t, s)
	insert("before", 200, at)
	if got := lines(pageDims); got == "0" {
		t.Fatal("migration 010 wrote no per-page rows: the upgrade below tests nothing")
	}
	siteRows := lines(site)
	if got, w := lines(pageRollup), wanted(); got != w {
		t.Fatalf("page_rollup before the upgrade:\n%s\nwant\n%s", got, w)
	}
	copyStmts := 0
	for _, m := range ms {
		if m.Version == 11 {
			for i, st := range m.Statements {
				if strings.HasPrefix(st, "INSERT INTO page_views") {
					copyStmts = i + 1
				}
			}
		}
	}
	if copyStmts == 0 {
		t.Fatal("migration 011 has no copy into page_views")
	}
	apply(11, 11, copyStmts) // a crash right after the copy
	if err := migrations.Apply(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	migrated = true
	if got, w := stored(), sorted(); got != w {
		t.Errorf("page_views after the upgrade:\n%s\nwant\n%s", got, w)
	}
	if got := lines(pageDims); got != "0" {
		t.Errorf("%s per-page rows of migration 010 left", got)
	}
	if got := lines(site); got != siteRows {
		t.Errorf("the site's rows changed:\n%s\nwant\n%s", got, siteRows)
	}
	// A rerun, as after a crash before schema_migrations recorded it, and
	// then 012, which such a crash would not have reached yet (it moves the
	// views 011 makes on views_raw).
	apply(11, 11, 0)
	apply(12, 12, 0)
	if got, w := stored(), sorted(); got != w {
		t.Errorf("page_views after rerunning migration 11:\n%s\nwant\n%s", got, w)
	}
	insert("after", 50, at.Add(2*time.Hour))
	if got, w := stored(), sorted(); got != w {
		t.Errorf("page_views after new views:\n%s\nwant\n%s", got, w)
	}
	if got, w := lines(pageRollup), wanted(); got != w {
		t.Errorf("page_rollup after new views:\n%s\nwant\n%s", got, w)
	}
	if got := lines(pageDims); got != "0" {
		t.Errorf("new views wrote %s per-page rows into dim_rollup", got)
	}
}
