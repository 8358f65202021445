package migrations_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// Migration 023 on a store with engagement rows: the stats reads of one
// value or a few answer exactly as before it, and once the projection is
// built (a merge rebuilds it; on a live store the migration's MATERIALIZE
// does, in the background) the engine reads them from by_value, which
// holds one page's rows together, instead of every page's rows of the
// range. Test-only SQL writes the rows: 400 pages over three days of hours
// and their days, each hour with its histograms, more granules than one.
func TestEngagementByValue(t *testing.T) {
	s := storetest.Open(t)
	ctx := t.Context()
	applyBefore(t, s, 23)
	for _, q := range []string{`
		INSERT INTO engagement_rollup (grain, site, dim, value, bucket, engagements, engaged_ms, engaged_hist, scroll_hist)
		SELECT g, 'a.example', 'page', concat('/p', toString(number % 400)),
			if(g = 'hour', toStartOfHour(t), toStartOfDay(t)), 1, number % 9000,
			map(toUInt8(number % 7), toInt64(1)), map(toUInt8(number % 5), toInt64(1))
		FROM numbers(28800)
		ARRAY JOIN ['hour', 'day'] AS g
		ARRAY JOIN [toDateTime('2026-11-01 00:00:00', 'UTC') + 3600 * intDiv(number, 400)] AS t`, `
		INSERT INTO engagement_rollup (grain, site, dim, value, bucket, visits, bounces, visit_ms, exits)
		SELECT g, 'a.example', 'entry_page', concat('/p', toString(number % 400)),
			if(g = 'hour', toStartOfHour(t), toStartOfDay(t)), 1, number % 2, number % 60000, 1
		FROM numbers(28800)
		ARRAY JOIN ['hour', 'day'] AS g
		ARRAY JOIN [toDateTime('2026-11-01 00:00:00', 'UTC') + 3600 * intDiv(number, 400)] AS t`,
	} {
		if err := s.Exec(ctx, q, nil); err != nil {
			t.Fatal(err)
		}
	}

	// The three reads as the stats API makes them: a page's summary over
	// 1 Nov 05:00 – 3 Nov 19:00 (the whole 2 Nov from its day row) against
	// the period before, its daily series of 1-3 Nov in Berlin, and the
	// engagement columns of a page ranking.
	period := store.Params{"site": "a.example", "edim": "page", "evalue": "/p7", "vdim": "entry_page", "vvalue": "/p7",
		"from": "2026-11-01 05:00:00", "to": "2026-11-03 19:00:00", "dfrom": "2026-11-02 00:00:00", "dto": "2026-11-03 00:00:00",
		"pfrom": "2026-10-29 15:00:00", "pto": "2026-11-01 05:00:00", "pdfrom": "2026-10-30 00:00:00", "pdto": "2026-11-01 00:00:00"}
	series := store.Params{"site": "a.example", "grain": "hour", "from": "2026-10-31 23:00:00", "to": "2026-11-03 23:00:00",
		"daily": "1", "tz": "Europe/Berlin", "edim": "page", "evalue": "/p7", "vdim": "entry_page", "vvalue": "/p7"}
	values := store.Params{"site": "a.example", "dim": "page", "values": store.ArrayParam([]string{"/p7", "/p300", "/p399"}),
		"from": "2026-11-01 05:00:00", "to": "2026-11-03 19:00:00", "dfrom": "2026-11-02 00:00:00", "dto": "2026-11-03 00:00:00"}
	reads := []struct {
		name string
		p    store.Params
	}{{"stats_engagement", period}, {"stats_engagement_series", series}, {"stats_engagement_values", values}}
	answers := func() [][][]string {
		var out [][][]string
		for _, r := range reads {
			res, err := s.Query(ctx, queries.Text(r.name), r.p)
			if err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			if res.Len() == 0 {
				t.Fatalf("%s: no rows", r.name)
			}
			out = append(out, res.TextRows())
		}
		return out
	}
	before := answers()

	if err := migrations.Apply(ctx, s, discard()); err != nil {
		t.Fatal(err)
	}
	// Test-only SQL: the merge a live store does in time, which builds the
	// projection of every part (the migration's MATERIALIZE is a mutation
	// run in the background).
	if err := s.Exec(ctx, "OPTIMIZE TABLE engagement_rollup FINAL", nil); err != nil {
		t.Fatal(err)
	}
	after := answers()
	for i, r := range reads {
		if !slices.EqualFunc(before[i], after[i], slices.Equal[[]string]) {
			t.Errorf("%s: answers differ after migration 023:\nbefore %v\nafter  %v", r.name, before[i], after[i])
		}
		res, err := s.Query(ctx, "EXPLAIN projections = 1 "+queries.Text(r.name), r.p)
		if err != nil {
			t.Fatalf("explain %s: %v", r.name, err)
		}
		var lines []string
		for _, row := range res.TextRows() {
			lines = append(lines, row...)
		}
		plan := strings.Join(lines, "\n")
		if !strings.Contains(plan, "by_value") || strings.Contains(plan, "not better") {
			t.Errorf("%s does not read engagement_rollup's projection by_value:\n%s", r.name, plan)
		}
	}
}
