package storetest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/store"
)

// derivedRows reads every row of each table the materialized views fill
// from views_raw, as a reader sees them: the aggregating tables' rows
// merged per key (views summed, uniques estimated from the merged sketch,
// the newest time taken), page_views' rows one by one. Test-only SQL.
var derivedRows = map[string]string{
	"page_rollup": `SELECT grain, site, page, bucket, sum(views), uniqCombined64Merge(uniques)
		FROM page_rollup GROUP BY grain, site, page, bucket ORDER BY grain, site, page, bucket`,
	"dim_rollup": `SELECT grain, site, dim, page, value, bucket, sum(views), uniqCombined64Merge(12)(uniques)
		FROM dim_rollup GROUP BY grain, site, dim, page, value, bucket ORDER BY grain, site, dim, page, value, bucket`,
	"page_views": `SELECT site, page, time, visitor, ref_source, ref_host, utm_source, utm_medium, utm_campaign,
		browser, os, device, country, screen
		FROM page_views ORDER BY ALL`,
	"rejected_rollup": `SELECT site, verdict, time, ua, ua_cut, browser, device, asn, origin, sum(events), max(last)
		FROM rejected_rollup GROUP BY site, verdict, time, ua, ua_cut, browser, device, asn, origin ORDER BY ALL`,
	// Histograms without their zero entries (a merge can leave one), and
	// rows whose figures are all zero left out: no row, as the view writes
	// none.
	"engagement_rollup": `SELECT grain, site, dim, value, bucket, sum(engagements) AS e, sum(engaged_ms) AS ems,
		toString(mapFilter((k, v) -> v != 0, sumMap(engaged_hist))) AS eh, toString(mapFilter((k, v) -> v != 0, sumMap(scroll_hist))) AS sh,
		sum(visits) AS vi, sum(bounces) AS bo, sum(visit_ms) AS vms, sum(exits) AS ex, sum(rejected) AS rj
		FROM engagement_rollup GROUP BY grain, site, dim, value, bucket
		HAVING e != 0 OR ems != 0 OR eh != '{}' OR sh != '{}' OR vi != 0 OR bo != 0 OR vms != 0 OR ex != 0 OR rj != 0
		ORDER BY grain, site, dim, value, bucket`,
}

// DerivedRows returns, per table filled by a materialized view from
// views_raw (page_rollup, dim_rollup, page_views, rejected_rollup,
// engagement_rollup), every row as one line
// of tab-separated cells, in a fixed order: two stores whose rows read the
// same give equal maps. A rebuild's test compares them before and after.
func DerivedRows(tb testing.TB, st store.Store) map[string][]string {
	tb.Helper()
	out := make(map[string][]string, len(derivedRows))
	for table, q := range derivedRows {
		res, err := st.Query(context.Background(), q, nil)
		if err != nil {
			tb.Fatalf("read %s: %v", table, err)
		}
		lines := make([]string, len(res.TextRows()))
		for i, r := range res.TextRows() {
			lines[i] = strings.Join(r, "\t")
		}
		out[table] = lines
	}
	return out
}

// exactUpTo is, per aggregating table, the most visitors its uniques
// sketch (uniqCombined64 of precision 17, and 12 for dim_rollup) counts
// exactly. A sketch holding that many turns into a HyperLogLog on the
// next id merged into it, even one it already holds, so for exactly that
// many visitors one merge order reads the exact number and another an
// estimate of it (sql/queries/repair/dim_rollup_recount.sql). The same rows merged
// differently, by the views' inserts or by a rebuild, can differ there and
// nowhere else.
var exactUpTo = map[string]string{"page_rollup": "4096", "dim_rollup": "128"}

// DiffRows describes how two DerivedRows results differ, table by table
// (the first few rows missing from each side), or returns "" when equal.
// An aggregating table's rows are equal when their keys and views are,
// and their uniques too unless one side reads exactly the sketch's exact
// limit (see exactUpTo).
func DiffRows(got, want map[string][]string) string {
	var b strings.Builder
	for table, w := range want {
		g := got[table]
		if strings.Join(g, "\n") == strings.Join(w, "\n") {
			continue
		}
		g, w = withoutSketchBoundary(g, w, exactUpTo[table])
		if strings.Join(g, "\n") == strings.Join(w, "\n") {
			continue
		}
		b.WriteString(table + ": " + strconv.Itoa(len(g)) + " rows, want " + strconv.Itoa(len(w)) + "\n")
		onlyIn := func(label string, a, other []string) {
			in := make(map[string]int, len(other))
			for _, l := range other {
				in[l]++
			}
			shown := 0
			for _, l := range a {
				if in[l] > 0 {
					in[l]--
					continue
				}
				if shown++; shown > 5 {
					b.WriteString("  " + label + " …\n")
					return
				}
				b.WriteString("  " + label + " " + l + "\n")
			}
		}
		onlyIn("extra:", g, w)
		onlyIn("missing:", w, g)
	}
	for table := range got {
		if _, ok := want[table]; !ok {
			b.WriteString(table + ": not expected\n")
		}
	}
	return b.String()
}

// withoutSketchBoundary returns got and want with the uniques (the last
// cell) of a row whose key is on both sides set to want's when either side
// reads limit; both unchanged when limit is "".
func withoutSketchBoundary(got, want []string, limit string) ([]string, []string) {
	if limit == "" {
		return got, want
	}
	split := func(l string) (string, string) {
		i := strings.LastIndexByte(l, '\t')
		return l[:i], l[i+1:]
	}
	wantUniques := make(map[string]string, len(want))
	for _, l := range want {
		k, u := split(l)
		wantUniques[k] = u
	}
	out := make([]string, len(got))
	for i, l := range got {
		k, u := split(l)
		if wu, ok := wantUniques[k]; ok && (u == limit || wu == limit) {
			u = wu
		}
		out[i] = k + "\t" + u
	}
	return out, want
}
