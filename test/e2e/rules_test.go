package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestRuleSetsRecorded: every verdict records the version of the rule set
// that judged it, and GET /v1/admin/rules shows the active one and what a
// changed setting changed, with the events each judged.
func TestRuleSetsRecorded(t *testing.T) {
	data, db := t.TempDir(), apptest.NewDB()
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0"
	type rules struct {
		Active   string `json:"active"`
		RuleSets []struct {
			Version  string
			Events   uint64
			Valid    uint64
			Settings map[string]string
			Changes  []struct{ Setting, From, To string }
		} `json:"rule_sets"`
	}
	read := func(m *apptest.Server) rules {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+m.Addr()+"/v1/admin/rules", nil)
		req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
		code, body := apptest.NewClient(t, m).Do(req)
		var r rules
		if code != http.StatusOK || json.Unmarshal(body, &r) != nil {
			t.Fatalf("GET /v1/admin/rules: %d %s", code, body)
		}
		return r
	}
	stored := func(m *apptest.Server) map[string]uint64 {
		t.Helper()
		res, err := m.Store.Query(context.Background(), "SELECT rules, count() FROM views_raw GROUP BY rules", store.Params{}) // test-only SQL
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]uint64{}
		for _, r := range res.TextRows() {
			var n uint64
			_ = json.Unmarshal([]byte(r[1]), &n)
			out[r[0]] = n
		}
		return out
	}
	hit := func(m *apptest.Server, ip string, want uint64) {
		t.Helper()
		c := apptest.NewClient(t, m)
		if code := c.Send(apptest.Hit{IP: ip, UA: firefox, Site: "rules.example", Page: "/a"}); code != 200 {
			t.Fatalf("hit: %d", code)
		}
		apptest.Eventually(t, 30*time.Second, func() string {
			if n := apptest.Reasons(t, m, "rules.example")[string(viewcount.Valid)]; n != want {
				return "the view not stored yet"
			}
			return ""
		})
	}

	m := apptest.StartWith(t, data, db, nil, time.Now)
	apptest.NewClient(t, m).AddSite("rules.example")
	hit(m, "203.0.113.7", 1)
	first := read(m)
	if len(first.RuleSets) != 1 || first.Active != first.RuleSets[0].Version || len(first.Active) != 12 {
		t.Fatalf("first start: %+v", first)
	}
	if rs := first.RuleSets[0]; rs.Events != 1 || rs.Valid != 1 || rs.Settings["DuplicateWindow"] != "30m0s" || len(rs.Changes) != 0 {
		t.Errorf("first rule set: %+v", rs)
	}
	if got := stored(m); got[first.Active] != 1 || len(got) != 1 {
		t.Errorf("views_raw rules = %v, want 1 view judged by %s", got, first.Active)
	}
	m.Close()

	m = apptest.StartWith(t, data, db, func(c *app.Config) { c.Validate.Rules.DuplicateWindow = 20 * time.Minute }, time.Now)
	hit(m, "203.0.113.8", 2)
	second := read(m)
	if len(second.RuleSets) != 2 || second.RuleSets[0].Version != first.Active || second.Active != second.RuleSets[1].Version || second.Active == first.Active {
		t.Fatalf("after the change: %+v", second)
	}
	rs := second.RuleSets[1]
	if rs.Events != 1 || len(rs.Changes) != 1 || rs.Changes[0].Setting != "DuplicateWindow" || rs.Changes[0].From != "30m0s" || rs.Changes[0].To != "20m0s" {
		t.Errorf("the new rule set: %+v", rs)
	}
	if got := stored(m); got[first.Active] != 1 || got[second.Active] != 1 {
		t.Errorf("views_raw rules = %v", got)
	}
}
