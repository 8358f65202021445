package rollup_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup"
	vcsql "github.com/viewcount/viewcount/sql"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Migration 010 on a store with data: the views already in views_raw get
// their per-page breakdown rows from the backfill, exactly once (a rerun
// adds nothing), the site's rows stay as they were, and new views get
// theirs from the new view.
func TestMigratePageBreakdownsBackfills(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	ms, err := vcsql.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	apply := func(upTo, only int) {
		t.Helper()
		for _, m := range ms {
			if m.Version > upTo || (only != 0 && m.Version != only) {
				continue
			}
			for _, st := range m.Statements {
				if err := s.Exec(ctx, st, nil); err != nil {
					t.Fatalf("migration %d: %v", m.Version, err)
				}
			}
		}
	}
	// want: the per-page rows the store must hold, counted here from the
	// inserted verdicts (every set has fewer than 128 ids: the sketch is exact).
	want := map[string]map[uint64]bool{}
	views := map[string]int{}
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
			// The page's combination of every dimension, as migration 010 joins them.
			value := strings.Join([]string{v.Dims.RefSource, v.Dims.RefHost, v.UTM.Source, v.UTM.Medium, v.UTM.Campaign,
				v.Dims.Browser, v.Dims.OS, v.Dims.Device, v.Country, v.Dims.Screen}, "\x1f")
			for grain, bucket := range map[string]time.Time{"hour": v.Time.Truncate(time.Hour), "day": v.Time.Truncate(24 * time.Hour)} {
				k := fmt.Sprintf("page_dims %s \"%s\" %s %s", v.Page, value, grain, bucket.Format(time.DateTime))
				if want[k] == nil {
					want[k] = map[uint64]bool{}
				}
				want[k][v.Visitor] = true
				views[k]++
			}
		}
		if err := s.InsertViews(ctx, token, vs); err != nil {
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
	rows := func(pages string) string {
		t.Helper()
		res, err := s.Query(ctx, "SELECT concat(dim, ' ', page, ' \"', value, '\" ', toString(grain), ' ', toString(bucket), ' ',"+
			" toString(sum(views)), '/', toString(uniqCombined64Merge(12)(uniques))) AS line FROM dim_rollup"+
			" WHERE "+pages+" AND dim NOT IN ('reason', 'total') GROUP BY dim, page, value, grain, bucket ORDER BY line", nil)
		if err != nil {
			t.Fatal(err)
		}
		lines := make([]string, len(res.Rows))
		for i, r := range res.Rows {
			lines[i] = r[0]
		}
		return strings.Join(lines, "\n")
	}
	at := time.Date(2026, 10, 31, 22, 30, 0, 0, time.UTC) // 200 views over 5.4 h: five hours, two days
	apply(9, 0)
	insert("before", 200, at)
	site := rows("page = ''")
	if got := rows("page != ''"); got != "" {
		t.Fatalf("per-page rows before migration 010:\n%s", got)
	}
	if err := rollup.Migrate(ctx, s, nil); err != nil {
		t.Fatal(err)
	}
	w := wanted()
	if got := rows("page != ''"); got != w {
		t.Errorf("after the upgrade:\n%s\nwant\n%s", got, w)
	}
	if got := rows("page = ''"); got != site {
		t.Errorf("the site's rows changed:\n%s\nwant\n%s", got, site)
	}
	apply(10, 10) // a rerun, as after a crash before schema_migrations recorded it
	if got := rows("page != ''"); got != w {
		t.Errorf("after rerunning migration 10:\n%s\nwant\n%s", got, w)
	}
	insert("after", 50, at.Add(2*time.Hour))
	if got, w := rows("page != ''"), wanted(); got != w {
		t.Errorf("after new views:\n%s\nwant\n%s", got, w)
	}
}
