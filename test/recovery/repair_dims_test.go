package recovery

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// addDimViews inserts n events of site with every dimension varied, one in
// seven rejected, straight into views_raw (no stream position, as
// addViews).
func addDimViews(t *testing.T, s store.Store, token, site string, n int) {
	t.Helper()
	sources := []viewcount.Dims{
		{RefSource: "(direct)", Browser: "Chrome", OS: "Windows", Device: "desktop", Screen: "desktop"},
		{RefHost: "google.com", RefSource: "Google", Browser: "Safari", OS: "iOS", Device: "mobile", Screen: "mobile"},
		{RefHost: "blog.example", RefSource: "blog.example", Browser: "Firefox", OS: "Linux", Device: "desktop"},
	}
	rows := make([]viewcount.Verdict, n)
	start := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Millisecond)
	for i := range rows {
		reason := viewcount.Valid
		if i%7 == 6 {
			reason = viewcount.Duplicate
		}
		ev := viewcount.Event{Time: start.Add(time.Duration(i) * 47 * time.Second), Site: site,
			Page: fmt.Sprintf("/p%d", i%4), ID: fmt.Sprintf("%s-%d", token, i), Visitor: uint64(i % 31),
			Country: []string{"DE", "US", ""}[i%3]}
		if i%5 == 0 {
			ev.UTM = viewcount.UTM{Source: "newsletter", Medium: "email", Campaign: "weekly"}
		}
		rows[i] = viewcount.Verdict{Event: ev, Reason: reason, Dims: sources[i%len(sources)]}
	}
	if err := storetest.InsertFed(t.Context(), s, token, rows); err != nil {
		t.Fatal(err)
	}
}

// A damaged dim_rollup part and a damaged page_views part, end to end:
// check names both tables, their parts and the differing rows in their own
// terms; repair rollups rebuilds both so every row is back as the views
// wrote it, and check passes.
func TestCheckAndRepairDimAndPageViews(t *testing.T) {
	s, flags := storeWithViews(t, "a.example", 0)
	addDimViews(t, s, "d1", "a.example", 300)
	addDimViews(t, s, "d2", "b.example", 120)
	want := storetest.DerivedRows(t, s)
	if len(want["dim_rollup"]) == 0 || len(want["page_views"]) != 258+103 {
		t.Fatalf("dim_rollup %d rows, page_views %d rows: want some and 361 valid views", len(want["dim_rollup"]), len(want["page_views"]))
	}

	dimPart := storetest.BreakPart(t, s, "dim_rollup")
	viewsPart := storetest.BreakPart(t, s, "page_views")
	out, err := runCmd(append([]string{"check"}, flags...)...)
	if err == nil {
		t.Fatalf("check of a damaged store passed:\n%s", out)
	}
	for _, w := range []string{
		"damaged part broken-on-start_" + dimPart + " of dim_rollup", "damaged part broken-on-start_" + viewsPart + " of page_views",
		"dim_rollup: ", "page_views: ", "row(s) differ from the recount", "viewcount repair rollups",
		"    day a.example browser \"Chrome\" ", "    day a.example \"/p0\" ", "row checksum 0 (recount ",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("check output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "page_rollup: ") {
		t.Errorf("check reports page_rollup, which is sound:\n%s", out)
	}
	out, _ = runCmd(append([]string{"check", "--json"}, flags...)...)
	var rep checkReport
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &rep); err != nil {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	differing := map[string]uint64{}
	for _, r := range rep.Rollups {
		differing[r.Table] = r.Differing
	}
	if rep.OK || len(rep.DamagedParts) != 2 || differing["page_rollup"] != 0 || differing["dim_rollup"] == 0 || differing["page_views"] == 0 {
		t.Errorf("check --json: ok %v, damaged parts %+v, differing %v", rep.OK, rep.DamagedParts, differing)
	}
	if !strings.Contains(out, `"dim": "browser"`) || !strings.Contains(out, `"stored_checksum": 0,`) {
		t.Errorf("check --json lacks dim_rollup's dim or page_views' checksum:\n%s", out)
	}

	out, err = runCmd(append([]string{"repair", "rollups"}, flags...)...)
	if err != nil {
		t.Fatalf("repair rollups: %v\n%s", err, out)
	}
	for _, w := range []string{"dim_rollup: month 1/", "page_views: month 1/", "2 damaged part(s) dropped"} {
		if !strings.Contains(out, w) {
			t.Errorf("repair output lacks %q:\n%s", w, out)
		}
	}
	if diff := storetest.DiffRows(storetest.DerivedRows(t, s), want); diff != "" {
		t.Errorf("repaired rows differ from the views':\n%s", diff)
	}
	if parts, err := repair.BrokenParts(t.Context(), s); err != nil || len(parts) != 0 {
		t.Errorf("broken parts after repair = %+v, %v", parts, err)
	}
	if out, err := runCmd(append([]string{"check"}, flags...)...); err != nil {
		t.Errorf("check after repair: %v\n%s", err, out)
	}
}
