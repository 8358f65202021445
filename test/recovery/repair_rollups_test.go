package recovery

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
)

// storeWithViews returns a migrated store on the shared test engine holding
// n valid views of site (spread over pages and visitors, one insert) and
// the flags that point a command at it.
func storeWithViews(t *testing.T, site string, n int) (store.Store, []string) {
	t.Helper()
	s := storetest.Open(t)
	if err := migrations.Apply(t.Context(), s, nil); err != nil {
		t.Fatal(err)
	}
	addViews(t, s, "v1", site, n)
	res, err := s.Query(t.Context(), "SELECT currentDatabase()", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, []string{"--data", t.TempDir(), "--store-dir", storetest.Dir(), "--database", res.TextRows()[0][0]}
}

// addViews inserts n valid views straight into views_raw. They never went
// through a stream, so they carry no stream position (seq 0): a position
// would be one the test's fresh stream never had, which the progress checks
// rightly call a lost stream tail.
func addViews(t *testing.T, s store.Store, token, site string, n int) {
	t.Helper()
	rows := make([]viewcount.Verdict, n)
	start := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Millisecond)
	for i := range rows {
		rows[i] = viewcount.Verdict{Event: viewcount.Event{Time: start.Add(time.Duration(i) * time.Minute), Site: site,
			Page: fmt.Sprintf("/p%d", i%4), ID: fmt.Sprintf("%s-%d", token, i), Visitor: uint64(i % 29)}, Reason: viewcount.Valid}
	}
	if err := storetest.InsertFed(t.Context(), s, token, rows); err != nil {
		t.Fatal(err)
	}
}

// checkReport is `viewcount check --json`'s answer, the fields the tests
// read.
type checkReport struct {
	OK           bool                   `json:"ok"`
	DamagedParts []repair.DetachedPart  `json:"damaged_parts"`
	Rollups      []repair.RecountResult `json:"rollups"`
}

func totals(t *testing.T, s store.Store) string {
	t.Helper()
	res, err := s.Query(t.Context(), "SELECT site, sum(views), uniqCombined64Merge(uniques) FROM page_rollup WHERE grain = 'total' GROUP BY site ORDER BY site", nil)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(res.TextRows())
}

func runCmd(args ...string) (string, error) {
	var out, errOut bytes.Buffer
	err := app.Run(args, &out, &errOut)
	return out.String() + errOut.String(), err
}

// A damaged rollup end to end: `viewcount check` names the damaged
// part and the differing counts and exits 1; `repair rollups` rebuilds the
// rollup so the counts are back, equal to the recount, and check passes.
func TestCheckAndRepairRollups(t *testing.T) {
	s, flags := storeWithViews(t, "a.example", 150)
	addViews(t, s, "v2", "b.example", 40)
	want := totals(t, s)

	out, err := runCmd(append([]string{"check"}, flags...)...)
	if err != nil || !strings.HasPrefix(out, "ok: every rollup (page_rollup, dim_rollup, page_views, rejected_rollup, engagement_rollup) equals its recount") {
		t.Fatalf("check of a sound store: %v\n%s", err, out)
	}

	part := storetest.BreakPart(t, s, "page_rollup")
	out, err = runCmd(append([]string{"check"}, flags...)...)
	if err == nil {
		t.Fatalf("check of a damaged store passed:\n%s", out)
	}
	for _, w := range []string{"damaged part broken-on-start_" + part + " of page_rollup", "page_rollup: ", "row(s) differ from the recount", "viewcount repair rollups", "    day a.example \"/p0\" ", " more\n"} {
		if !strings.Contains(out, w) {
			t.Errorf("check output lacks %q:\n%s", w, out)
		}
	}
	out, err = runCmd(append([]string{"check", "--json"}, flags...)...)
	var rep checkReport
	if jerr := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &rep); err == nil || jerr != nil {
		t.Fatalf("check --json: err %v, decode %v:\n%s", err, jerr, out)
	}
	if rep.OK || len(rep.DamagedParts) != 1 || rep.DamagedParts[0].Table != "page_rollup" || len(rep.Rollups) != 5 || rep.Rollups[0].Table != "page_rollup" || rep.Rollups[0].Differing == 0 ||
		rep.Rollups[1].Differing != 0 || rep.Rollups[2].Differing != 0 || rep.Rollups[3].Differing != 0 || rep.Rollups[4].Differing != 0 {
		t.Errorf("check --json = %+v", rep)
	}

	out, err = runCmd(append([]string{"repair", "rollups"}, flags...)...)
	if err != nil {
		t.Fatalf("repair rollups: %v\n%s", err, out)
	}
	for _, w := range []string{"rebuilding page_rollup, dim_rollup, page_views, rejected_rollup, engagement_rollup from views_raw", "page_rollup: month 1/", "page_views: month 1/", "rejected_rollup: month 1/", "engagement_rollup: month 1/", "5 rollup(s) rebuilt", "1 damaged part(s) dropped"} {
		if !strings.Contains(out, w) {
			t.Errorf("repair output lacks %q:\n%s", w, out)
		}
	}
	if got := totals(t, s); got != want {
		t.Errorf("totals after repair = %s, want %s", got, want)
	}
	if out, err := runCmd(append([]string{"check"}, flags...)...); err != nil {
		t.Errorf("check after repair: %v\n%s", err, out)
	}
}

// A damaged views_raw is reported with the views a rebuild would drop; the
// rebuild is refused until --force.
func TestRepairRollupsRefusesDamagedRaw(t *testing.T) {
	s, flags := storeWithViews(t, "a.example", 120)
	addViews(t, s, "v2", "b.example", 30)
	want := totals(t, s)
	storetest.BreakPart(t, s, "views_raw") // the first part: a.example's

	out, err := runCmd(append([]string{"repair", "rollups"}, flags...)...)
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("repair of a damaged views_raw: err %v, want a refusal naming --force\n%s", err, out)
	}
	for _, w := range []string{"views_raw is damaged: 1 part(s)", "a.example: 120 of 120", "--retention"} {
		if !strings.Contains(out, w) {
			t.Errorf("repair output lacks %q:\n%s", w, out)
		}
	}
	if got := totals(t, s); got != want {
		t.Errorf("a refused repair changed the counts: %s, want %s", got, want)
	}
	out, err = runCmd(append([]string{"check"}, flags...)...)
	if err == nil || !strings.Contains(out, "views_raw lacks 120 of the 120 valid views the rollups count for a.example") {
		t.Errorf("check: %v\n%s", err, out)
	}

	if out, err := runCmd(append([]string{"repair", "rollups", "--force"}, flags...)...); err != nil {
		t.Fatalf("repair --force: %v\n%s", err, out)
	}
	if got := totals(t, s); !strings.Contains(got, "b.example 30") || strings.Contains(got, "a.example") {
		t.Errorf("after --force the counts are views_raw's: %s", got)
	}
	if out, err := runCmd(append([]string{"check"}, flags...)...); err != nil {
		t.Errorf("check after --force: %v\n%s", err, out)
	}
}

// An outdated damaged part misses nothing: check passes and says so, the
// repair deletes it.
func TestCheckOutdatedPart(t *testing.T) {
	s, flags := storeWithViews(t, "a.example", 10)
	addViews(t, s, "v2", "a.example", 5)
	if err := s.Exec(t.Context(), "OPTIMIZE TABLE views_raw FINAL", nil); err != nil {
		t.Fatal(err)
	}
	storetest.BreakOutdatedPart(t, s, "views_raw")
	out, err := runCmd(append([]string{"check"}, flags...)...)
	if err != nil || !strings.Contains(out, "1 outdated damaged part(s) set aside with nothing missing") {
		t.Errorf("check: %v\n%s", err, out)
	}
	out, err = runCmd(append([]string{"repair", "rollups"}, flags...)...)
	if err != nil || !strings.Contains(out, "; 1 damaged part(s) dropped") {
		t.Errorf("repair: %v\n%s", err, out)
	}
	if out, err := runCmd(append([]string{"check"}, flags...)...); err != nil || !strings.Contains(out, "no damaged store parts") {
		t.Errorf("check after repair: %v\n%s", err, out)
	}
}

// The embedded store belongs to the running server: a check waits for it
// to stop instead of opening the files under it.
func TestCheckNeedsTheDataDir(t *testing.T) {
	_, flags := storeWithViews(t, "a.example", 1)
	apptest.StartWith(t, flags[1], flags[5], nil, time.Now)
	if out, err := runCmd(append([]string{"check"}, flags...)...); err == nil || !strings.Contains(err.Error(), "stop the server first") {
		t.Errorf("check on a locked data dir: %v\n%s", err, out)
	}
}

// serve reports a damaged store part before it serves: /readyz's health
// part store_parts fails, naming the table.
func TestServeReportsDamagedPart(t *testing.T) {
	s, flags := storeWithViews(t, "a.example", 20)
	storetest.BreakPart(t, s, "page_rollup")
	m := apptest.StartWith(t, t.TempDir(), flags[5], nil, time.Now)
	if p := m.Metrics.Failing()[repair.HealthPart]; !strings.Contains(p, "page_rollup (1)") {
		t.Errorf("store_parts health = %q, want the damaged page_rollup part", p)
	}
}

// serve applies --raw-retention to views_raw's TTL.
func TestServeAppliesRawRetention(t *testing.T) {
	db := apptest.NewDB()
	m := apptest.StartWith(t, t.TempDir(), db, func(c *app.Config) { c.Store.RawRetention = 30 * 24 * time.Hour }, time.Now)
	days, err := migrations.RawRetentionDays(t.Context(), m.Store)
	if err != nil || days != 30 {
		t.Errorf("views_raw retention = %d days, %v; want 30", days, err)
	}
}
