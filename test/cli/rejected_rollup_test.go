package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/viewcount/viewcount/test/apptest"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rejectedReport is what TestRejectedRollupFollowsCorrections reads of
// GET /invalid.
type rejectedReport struct {
	Valid         uint64            `json:"valid"`
	ByReason      map[string]uint64 `json:"by_reason"`
	TopUserAgents map[string][]struct {
		UA     string `json:"ua"`
		Events uint64 `json:"events"`
	} `json:"top_user_agents"`
	TopClasses map[string][]struct {
		Browser string `json:"browser"`
		Device  string `json:"device"`
		Events  uint64 `json:"events"`
	} `json:"top_classes"`
}

// agents is the report's bot_ua agents as "ua=events", most first.
func (r rejectedReport) agents() string {
	var out []string
	for _, a := range r.TopUserAgents["bot_ua"] {
		out = append(out, fmt.Sprintf("%s=%d", a.UA, a.Events))
	}
	return strings.Join(out, " | ")
}

// TestRejectedRollupFollowsCorrections: the invalid-traffic report's top
// rejected user agents come from rejected_rollup, and a correction moves
// views in and out of it as it does of the other rollups. A site's app
// signs its user agent with a URL (bot_ua); the operator allows it: its
// views leave the top rejected list and count as valid, a curl stays;
// undoing the allow brings them back. Reconcile finds every rollup agreeing
// with views_raw throughout, and names rejected_rollup's hour when a row of
// it does not.
func TestRejectedRollupFollowsCorrections(t *testing.T) {
	const site = "rejected-rollup.example"
	const appUA = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 RollApp/1.0 (+https://rollapp.example/about)"
	const curlUA = "curl/8.5.0"
	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	token := c.AddSite(site)
	start := time.Now().UTC().Add(-time.Second)
	for i := range 10 {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(900 + i), UA: appUA, Site: site, Page: "/a"}); code != http.StatusOK {
			t.Fatalf("app hit: %d", code)
		}
	}
	for i := range 4 {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(950 + i), UA: curlUA, Site: site, Page: "/a"}); code != http.StatusOK {
			t.Fatalf("curl hit: %d", code)
		}
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(970 + i), UA: apptest.FirefoxUA, Site: site, Page: "/b"}); code != http.StatusOK {
			t.Fatalf("hit: %d", code)
		}
	}
	report := func() rejectedReport {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, c.Base+"/v1/sites/"+site+"/invalid", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		code, body := c.Do(req)
		if code != http.StatusOK {
			t.Fatalf("GET /invalid: %d %s", code, body)
		}
		var rep rejectedReport
		if err := json.Unmarshal(body, &rep); err != nil {
			t.Fatalf("%v\n%s", err, body)
		}
		return rep
	}
	rejectedList := appUA + "=10 | " + curlUA + "=4"
	apptest.Eventually(t, time.Minute, func() string {
		if r := report(); r.agents() != rejectedList || r.Valid != 4 {
			return fmt.Sprintf("before the correction: bot_ua agents %q, valid %d; want %q and 4", r.agents(), r.Valid, rejectedList)
		}
		return ""
	})
	clean := func(when string) {
		t.Helper()
		rep, err := apptest.Reconcile(t, m, start.Add(-time.Hour), time.Now().Add(time.Hour))
		if err != nil || !rep.OK() || rep.Differing["rejected_rollup"] != 0 || len(rep.Differing) != 5 {
			t.Errorf("reconcile %s: %v %+v", when, err, rep)
		}
	}
	clean("before the correction")

	flags := []string{"--server", "http://" + m.Addr(), "--admin-token", apptest.AdminToken}
	end := time.Now().UTC().Add(time.Hour)
	var out, progress bytes.Buffer
	err := run("correct", append([]string{"add", "--site", site, "--kind", "allow", "--ua", "RollApp/", "--reason", "bot_ua",
		"--from", start.Format(time.RFC3339Nano), "--to", end.Format(time.RFC3339Nano), "--why", "our own app signs its user agent"}, flags...), &out, &progress)
	if err != nil {
		t.Fatalf("correct add allow: %v\n%s", err, progress.String())
	}
	id := strings.Fields(out.String())[1]
	// The revalidation rebuilt the rollups before it answered.
	r := report()
	if r.agents() != curlUA+"=4" || r.ByReason["bot_ua"] != 4 || r.Valid != 14 ||
		len(r.TopClasses["bot_ua"]) != 1 || r.TopClasses["bot_ua"][0].Events != 4 {
		t.Errorf("after the allow: bot_ua agents %q, classes %+v, by reason %v, valid %d; want curl's 4 alone and 14 valid",
			r.agents(), r.TopClasses["bot_ua"], r.ByReason, r.Valid)
	}
	clean("after the allow")

	out.Reset()
	if err := run("correct", append([]string{"undo", id, "--why", "the app dropped the URL"}, flags...), &out, &progress); err != nil {
		t.Fatalf("undo: %v\n%s", err, progress.String())
	}
	if r := report(); r.agents() != rejectedList || r.Valid != 4 {
		t.Errorf("after the undo: bot_ua agents %q, valid %d; want %q and 4", r.agents(), r.Valid, rejectedList)
	}
	clean("after the undo")

	// A row of rejected_rollup that no event in views_raw accounts for.
	// Test-only SQL.
	err = m.Store.Exec(context.Background(), `INSERT INTO rejected_rollup SELECT 'rejected-rollup.example', 'bot_ua',
		toDateTime('2026-01-15 10:00:00', 'UTC'), 'ghost/1.0', false, '', 'other', 0, '', 3, toDateTime64('2026-01-15 10:20:00', 3, 'UTC')`, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The command exits non-zero on drift, and lists it.
	rep, err := apptest.Reconcile(t, m, time.Unix(0, 0), time.Now().Add(time.Hour))
	if err == nil || rep.OK() || rep.Differing["rejected_rollup"] != 1 || len(rep.Drift) != 1 ||
		rep.Drift[0] != (apptest.Drift{Table: "rejected_rollup", Window: "2026-01-15", Rows: 1, StoredViews: 3, RecountViews: 0}) {
		t.Errorf("reconcile with a stray rejected_rollup row: %v %+v", err, rep)
	}
	printed, _, err := apptest.Command(append([]string{"reconcile"}, apptest.ReconcileFlags(t, m)...)...)
	if err == nil || !strings.Contains(printed, "rejected_rollup  2026-01-15  1     3             0") {
		t.Errorf("reconcile printed (%v):\n%s", err, printed)
	}
}
