package cli

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestSiteCommands runs `viewcount site add|list|rotate|delete` against a
// whole server (embedded NATS and chDB), with one view of the site counted
// through the real pipeline.
func TestSiteCommands(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 0, 30, 0, time.UTC)
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), nil, func() time.Time { return at })
	c := apptest.NewClient(t, m)
	t.Setenv("VIEWCOUNT_ADMIN_TOKEN", apptest.AdminToken) // what docs/getting-started.md recommends over --admin-token
	site := func(args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		err := app.Run(append(append([]string{"site"}, args...), "--server", c.Base), &out, &out)
		return out.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := site(args...)
		if err != nil {
			t.Fatalf("site %s: %v", strings.Join(args, " "), err)
		}
		return out
	}
	if out := must("add", "cli.example"); !strings.HasPrefix(out, `{"site":"cli.example","token":"vcs_`) {
		t.Fatalf("add: %q", out)
	}
	must("add", "idle.example")
	const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0"
	if code := c.Send(apptest.Hit{IP: "203.0.113.7", UA: firefox, Site: "cli.example", Page: "/hello"}); code != 200 {
		t.Fatalf("hit: %d", code)
	}
	apptest.
		// Fed counts once the feed that took the row into the rollups
		// returned: views_raw alone shows the row earlier.
		Eventually(t, 30*time.Second, func() string {
			if n := apptest.Reasons(t, m, "cli.example")[string(viewcount.Valid)]; n != 1 || m.Metrics.Fed.Load() < 1 {
				return "the view not counted yet"
			}
			return ""
		})

	// Sites are dated by the server's clock.
	created := func(string) string { return at.Format(time.RFC3339) }
	want := "SITE          CREATED               TIMEZONE  LAST VIEW             SHARE LINK  HOSTNAMES\n" +
		"cli.example   " + created("cli.example") + "  UTC       2026-11-30T10:00:00Z  no          cli.example *.cli.example\n" +
		"idle.example  " + created("idle.example") + "  UTC       never                 no          idle.example *.idle.example\n"
	if out := must("list"); out != want {
		t.Errorf("list:\n%s\nwant:\n%s", out, want)
	}
	if out := must("list", "--json"); !strings.HasPrefix(out, `{"sites":[{"site":"cli.example",`) || !strings.HasSuffix(out, "\"last_view\":null}]}\n") {
		t.Errorf("list --json: %q", out)
	}

	// Hostnames: shown, set, refused when not host names.
	if out := must("hosts", "idle.example"); !strings.Contains(out, `"hostnames":["idle.example","*.idle.example"],"hostnames_since":null`) {
		t.Errorf("hosts: %q", out)
	}
	if out := must("hosts", "idle.example", "idle.example", "*.idle.example", "idle-example.translate.goog"); !strings.Contains(out, `"hostnames":["idle.example","*.idle.example","idle-example.translate.goog"],"hostnames_since":"`) {
		t.Errorf("hosts set: %q", out)
	}
	if _, err := site("hosts", "idle.example", "localhost:3000"); err == nil || !strings.Contains(err.Error(), `400 Bad Request: {"error":"hostnames: [0]`) {
		t.Errorf("hosts localhost:3000: %v", err)
	}
	if out := must("hosts", "idle.example", "idle.example", "*.idle.example"); !strings.Contains(out, `"hostnames":["idle.example","*.idle.example"]`) {
		t.Errorf("hosts reset: %q", out)
	}

	// Rotation: the old token is refused at once, the new one works.
	out := must("rotate", "cli.example")
	var rotated struct {
		Site, Token string
		ShareLink   string `json:"share_link"`
	}
	if err := json.Unmarshal([]byte(out), &rotated); err != nil || rotated.Site != "cli.example" || len(rotated.Token) != 52 || rotated.ShareLink != "none" {
		t.Fatalf("rotate: %q %v", out, err)
	}
	token := rotated.Token
	if out := must("rotate", "idle.example", "--keep-share"); !strings.Contains(out, `"share_link":"none"`) {
		t.Errorf("rotate --keep-share: %q", out)
	}
	report := func(tok string) int {
		req, _ := http.NewRequest("GET", c.Base+"/v1/sites/cli.example/invalid", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		code, _ := c.Do(req)
		return code
	}
	if code := report(token); code != 200 {
		t.Errorf("new token: %d", code)
	}
	if _, err := site("rotate", "none.example"); err == nil || err.Error() != `site rotate: 404 Not Found: {"error":"site not registered"}` {
		t.Errorf("rotate unknown: %v", err)
	}

	// Delete: without --confirm nothing goes, and the command says what would.
	// The view is one row of views_raw and four of page_rollup (one per
	// grain); tables later migrations add are listed as the store has them.
	rows := siteRows(t, m, "cli.example")
	if rows["views_raw"] != 1 || rows["page_rollup"] != 4 {
		t.Fatalf("rows of the site: %v", rows)
	}
	var list []string
	for _, table := range slices.Sorted(maps.Keys(rows)) {
		list = append(list, table+" "+strconv.FormatUint(rows[table], 10))
	}
	rowsJSON, _ := json.Marshal(rows)
	_, err := site("delete", "cli.example")
	if wantErr := "site delete: not deleted; this removes cli.example from the registry and its rows (" + strings.Join(list, ", ") + "); pass --confirm cli.example to delete it"; err == nil || err.Error() != wantErr {
		t.Fatalf("delete without confirm: %v\nwant %s", err, wantErr)
	}
	if n := apptest.Reasons(t, m, "cli.example")[string(viewcount.Valid)]; n != 1 {
		t.Fatalf("delete without confirm deleted: %d views left", n)
	}
	if out := must("delete", "cli.example", "--confirm", "cli.example"); out != `{"deleted_rows":`+string(rowsJSON)+`,"site":"cli.example"}`+"\n" {
		t.Errorf("delete: %q", out)
	}
	for table, n := range siteRows(t, m, "cli.example") {
		if n != 0 {
			t.Errorf("%s: %d rows left after delete", table, n)
		}
	}
	if code := report(token); code != 401 {
		t.Errorf("token of the deleted site: %d, want 401", code)
	}
	want = "SITE          CREATED               TIMEZONE  LAST VIEW  SHARE LINK  HOSTNAMES\n" +
		"idle.example  " + created("idle.example") + "  UTC       never      no          idle.example *.idle.example\n"
	if out := must("list"); out != want {
		t.Errorf("list after delete:\n%s\nwant:\n%s", out, want)
	}
	for _, args := range [][]string{{"nope"}, {"rotate"}, {"list", "extra"}, {"delete", "a.example", "b.example"}, {"hosts"}} {
		if _, err := site(args...); err == nil || !strings.HasPrefix(err.Error(), "usage:") {
			t.Errorf("site %v: %v, want the usage", args, err)
		}
	}
}

// siteRows reads the site's rows in every table with a site column.
func siteRows(t *testing.T, m *apptest.Server, site string) map[string]uint64 {
	t.Helper()
	return storetest.SiteRows(t, m.Store, site)
}
