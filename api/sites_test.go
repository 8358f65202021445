package api

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

func TestAdminListSites(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, d := range []string{"quiet.example", "busy.example"} {
		if _, _, err := f.sites.Add(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	f.views(t, "busy.example", "/a", 3)
	f.clock.t = f.clock.t.Add(90 * time.Second) // the newest view: 12:01:30 → minute 12:01
	f.views(t, "busy.example", "/b", 1)
	if w := f.do(t, "PATCH", "/v1/admin/sites/busy.example", testAdmin, `{"timezone":"Europe/Berlin"}`); w.Code != 200 {
		t.Fatalf("patch: %d %s", w.Code, w.Body)
	}
	if _, err := f.sites.CreateShare(ctx, "quiet.example"); err != nil {
		t.Fatal(err)
	}
	created := func(d string) string {
		site, err := f.sites.Get(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		return site.Created.Format(time.RFC3339)
	}
	want := `{"sites":[` +
		`{"site":"busy.example","created":"` + created("busy.example") + `","timezone":"Europe/Berlin","shared":false,` +
		`"hostnames":["busy.example","*.busy.example"],"hostnames_since":null,"engaged_after":10,"count_mode":"views","embed_origins":[],"last_view":"2026-11-29T12:01:00Z"},` +
		`{"site":"quiet.example","created":"` + created("quiet.example") + `","timezone":"UTC","shared":true,` +
		`"hostnames":["quiet.example","*.quiet.example"],"hostnames_since":null,"engaged_after":10,"count_mode":"views","embed_origins":[],"last_view":null}]}`
	w := f.do(t, "GET", "/v1/admin/sites", testAdmin, "")
	if w.Code != 200 || w.Body.String() != want {
		t.Errorf("list: %d\n got %s\nwant %s", w.Code, w.Body, want)
	}
	_, siteToken, _ := f.sites.Add(ctx, "third.example")
	for _, tok := range []string{"", siteToken, "wrong"} {
		if w := f.do(t, "GET", "/v1/admin/sites", tok, ""); w.Code != 401 {
			t.Errorf("list with %q: %d, want 401", tok, w.Code)
		}
	}
}

func TestAdminRotateToken(t *testing.T) {
	f := newFixture(t)
	_, old, err := f.sites.Add(context.Background(), "rot.example")
	if err != nil {
		t.Fatal(err)
	}
	const report = "/v1/sites/rot.example/invalid"
	w := f.do(t, "POST", "/v1/admin/sites/rot.example/token", testAdmin, "")
	var out struct{ Site, Token string }
	decode(t, w, 200, &out)
	if out.Site != "rot.example" || len(out.Token) != 52 || out.Token == old {
		t.Fatalf("rotate answer %s", w.Body)
	}
	if c := f.do(t, "GET", report, old, "").Code; c != 401 {
		t.Errorf("old token after rotation: %d, want 401", c)
	}
	if c := f.do(t, "GET", report, out.Token, "").Code; c != 200 {
		t.Errorf("new token: %d, want 200", c)
	}
	for _, tc := range []struct {
		path, token string
		want        int
		body        string
	}{
		{"/v1/admin/sites/none.example/token", testAdmin, 404, `{"error":"site not registered"}`},
		{"/v1/admin/sites/rot.example/token", out.Token, 401, `{"error":"missing or wrong bearer token"}`},
		{"/v1/admin/sites/rot.example/token", "", 401, `{"error":"missing or wrong bearer token"}`},
		{"/v1/admin/sites/bad%20site/token", testAdmin, 400, `{"error":"site: not a domain name"}`},
	} {
		if w := f.do(t, "POST", tc.path, tc.token, ""); w.Code != tc.want || w.Body.String() != tc.body {
			t.Errorf("POST %s: %d %s, want %d %s", tc.path, w.Code, w.Body, tc.want, tc.body)
		}
	}
}

func TestAdminPatchTimezone(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	site, _, err := f.sites.Add(ctx, "tz.example")
	if err != nil {
		t.Fatal(err)
	}
	created := site.Created.Format(time.RFC3339)
	patch := func(body string, want int, wantBody string) {
		t.Helper()
		if w := f.do(t, "PATCH", "/v1/admin/sites/tz.example", testAdmin, body); w.Code != want || w.Body.String() != wantBody {
			t.Errorf("PATCH %s: %d %s, want %d %s", body, w.Code, w.Body, want, wantBody)
		}
	}
	const hosts = `"hostnames":["tz.example","*.tz.example"],"hostnames_since":null,"engaged_after":10,"count_mode":"views","embed_origins":[]`
	patch(`{"timezone":"Europe/Berlin"}`, 200, `{"site":"tz.example","created":"`+created+`","timezone":"Europe/Berlin","shared":false,`+hosts+`}`)
	if got, _ := f.sites.Get(ctx, "tz.example"); got.Timezone != "Europe/Berlin" {
		t.Errorf("stored time zone %q", got.Timezone)
	}
	const bad = `{"error":"timezone: not an IANA time zone name such as Europe/Berlin or UTC"}`
	patch(`{"timezone":"Mars/Olympus"}`, 400, bad)
	patch(`{"timezone":"Local"}`, 400, bad)
	patch(`{"timezone":""}`, 400, bad)
	patch(`{}`, 400, `{"error":"body: timezone, hostnames, engaged_after, count_mode or embed_origins required"}`)
	patch(`{"timezone":"UTC","color":"red"}`, 400, `{"error":"body: unknown field \"color\" (want {\"timezone\":\"Europe/Berlin\"}, {\"hostnames\":[\"example.com\",\"*.example.com\"]}, {\"engaged_after\":10}, {\"count_mode\":\"engaged\"}, {\"embed_origins\":[\"https://blog.example.com\"]} or several)"}`)
	patch(`not json`, 400, `{"error":"body: want {\"timezone\":\"Europe/Berlin\"}, {\"hostnames\":[\"example.com\",\"*.example.com\"]}, {\"engaged_after\":10}, {\"count_mode\":\"engaged\"}, {\"embed_origins\":[\"https://blog.example.com\"]} or several"}`)
	if got, _ := f.sites.Get(ctx, "tz.example"); got.Timezone != "Europe/Berlin" {
		t.Errorf("refused patches changed the zone to %q", got.Timezone)
	}
	patch(`{"timezone":"UTC"}`, 200, `{"site":"tz.example","created":"`+created+`","timezone":"UTC","shared":false,`+hosts+`}`)
	if w := f.do(t, "PATCH", "/v1/admin/sites/none.example", testAdmin, `{"timezone":"UTC"}`); w.Code != 404 {
		t.Errorf("unknown site: %d, want 404", w.Code)
	}
}

// TestAdminEngagement: a site's engaged_after and count_mode are set by
// PATCH, checked against the histogram's bounds and the two modes; a bad
// value changes nothing, and the default threshold is stored as none.
func TestAdminEngagement(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, _, err := f.sites.Add(ctx, "eng.example"); err != nil {
		t.Fatal(err)
	}
	patch := func(body string, want int, part string) {
		t.Helper()
		if w := f.do(t, "PATCH", "/v1/admin/sites/eng.example", testAdmin, body); w.Code != want || !strings.Contains(w.Body.String(), part) {
			t.Errorf("PATCH %s: %d %s, want %d with %s", body, w.Code, w.Body, want, part)
		}
	}
	patch(`{"engaged_after":30}`, 200, `"engaged_after":30,"count_mode":"views","embed_origins":[]}`)
	patch(`{"count_mode":"engaged"}`, 200, `"engaged_after":30,"count_mode":"engaged","embed_origins":[]}`)
	for _, c := range []struct{ body, err string }{
		{`{"engaged_after":11}`, `engaged_after 11: want one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15,`},
		{`{"engaged_after":0}`, `engaged_after 0: want one of`},
		{`{"engaged_after":-5}`, `engaged_after -5`},
		{`{"engaged_after":"10"}`, `body: want`},
		{`{"count_mode":"likes"}`, `count_mode \"likes\": want \"views\" or \"engaged\"`},
		{`{"count_mode":"views","engaged_after":7200}`, `engaged_after 7200`},
	} {
		patch(c.body, 400, c.err)
	}
	if got, _ := f.sites.Get(ctx, "eng.example"); got.EngagedAfter != 30 || got.CountMode != viewcount.CountEngaged {
		t.Errorf("after refused patches: %+v", got)
	}
	patch(`{"engaged_after":10,"count_mode":"views"}`, 200, `"engaged_after":10,"count_mode":"views","embed_origins":[]}`)
	if got, _ := f.sites.Get(ctx, "eng.example"); got.EngagedAfter != 0 || got.CountMode != viewcount.CountViews {
		t.Errorf("defaults stored as %d %q, want none", got.EngagedAfter, got.CountMode)
	}
}

// TestAdminHostnames: a site's hostnames are its domain and subdomains
// until set; PATCH sets them (checked against the host-name allow-list,
// normalised), GET shows them with when they took effect, and a bad list,
// or a bad time zone beside a good list, changes nothing.
func TestAdminHostnames(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	site, _, err := f.sites.Add(ctx, "www.hosts.example")
	if err != nil {
		t.Fatal(err)
	}
	created := site.Created.Format(time.RFC3339)
	get := func() string {
		t.Helper()
		w := f.do(t, "GET", "/v1/admin/sites/www.hosts.example", testAdmin, "")
		if w.Code != 200 {
			t.Fatalf("GET: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	head := `{"site":"www.hosts.example","created":"` + created + `","timezone":"UTC","shared":false,`
	if got, want := get(), head+`"hostnames":["hosts.example","*.hosts.example"],"hostnames_since":null,"engaged_after":10,"count_mode":"views","embed_origins":[]}`; got != want {
		t.Errorf("default:\n got %s\nwant %s", got, want)
	}
	w := f.do(t, "PATCH", "/v1/admin/sites/www.hosts.example", testAdmin, `{"hostnames":["Hosts.Example.","*.hosts.example","hosts-example.translate.goog","hosts.example"]}`)
	stored, err := f.sites.Get(ctx, "www.hosts.example")
	if err != nil || len(stored.Hosts) != 1 {
		t.Fatalf("stored: %+v, %v", stored, err)
	}
	at := stored.Hosts[0].Since // the registry's clock
	set := head + `"hostnames":["hosts.example","*.hosts.example","hosts-example.translate.goog"],"hostnames_since":"` + at.Format(time.RFC3339Nano) + `","engaged_after":10,"count_mode":"views","embed_origins":[]}`
	if w.Code != 200 || w.Body.String() != set {
		t.Errorf("PATCH: %d\n got %s\nwant %s", w.Code, w.Body, set)
	}
	if got := get(); got != set {
		t.Errorf("GET after PATCH:\n got %s\nwant %s", got, set)
	}
	if !f.sites.AllowsHost("www.hosts.example", "hosts-example.translate.goog", at) || f.sites.AllowsHost("www.hosts.example", "hosts-example.translate.goog", at.Add(-time.Millisecond)) {
		t.Error("the registry does not allow the host added from then on")
	}
	for _, c := range []struct{ body, err string }{
		{`{"hostnames":[]}`, `hostnames: at least one hostname is required`},
		{`{"hostnames":["localhost"]}`, `hostnames: [0] \"localhost\": a single label, not a public host name`},
		{`{"hostnames":["hosts.example","127.0.0.1"]}`, `hostnames: [1] \"127.0.0.1\": an IP address, not a host name`},
		{`{"hostnames":["https://hosts.example/"]}`, `no scheme, port or path`},
		{`{"hostnames":["*.com"]}`, `a single label`},
		{`{"hostnames":"hosts.example"}`, `body: want`},
		{`{"hostnames":["hosts.example"],"timezone":"Mars/Olympus"}`, `timezone: not an IANA time zone name`},
		{`{"timezone":"UTC","hostnames":["a b"]}`, `hostnames: [0]`},
	} {
		if w := f.do(t, "PATCH", "/v1/admin/sites/www.hosts.example", testAdmin, c.body); w.Code != 400 || !strings.Contains(w.Body.String(), c.err) {
			t.Errorf("PATCH %s: %d %s, want 400 with %s", c.body, w.Code, w.Body, c.err)
		}
	}
	if got := get(); got != set {
		t.Errorf("refused patches changed the site:\n got %s\nwant %s", got, set)
	}
	if w := f.do(t, "PATCH", "/v1/admin/sites/www.hosts.example", testAdmin, `{"hostnames":["*"],"timezone":"Europe/Berlin"}`); w.Code != 200 ||
		!strings.Contains(w.Body.String(), `"timezone":"Europe/Berlin"`) || !strings.Contains(w.Body.String(), `"hostnames":["*"]`) {
		t.Errorf("PATCH both: %d %s", w.Code, w.Body)
	}
	for _, c := range []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/v1/admin/sites/none.example", testAdmin, 404},
		{"GET", "/v1/admin/sites/www.hosts.example", "", 401},
		{"PATCH", "/v1/admin/sites/none.example", testAdmin, 404},
	} {
		if w := f.do(t, c.method, c.path, c.token, `{"hostnames":["none.example"]}`); w.Code != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, w.Code, c.want)
		}
	}
}

// TestAdminDeleteSite: the site and its rows in every table go, another
// site's stay; without confirm nothing goes.
func TestAdminDeleteSite(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, token, err := f.sites.Add(ctx, "gone.example")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.sites.Add(ctx, "kept.example"); err != nil {
		t.Fatal(err)
	}
	// One insert: one part per table, so the row counts are exact (a merge
	// of separate inserts could fold page_rollup rows at any moment).
	var rows []viewcount.Verdict
	add := func(site, page string, r viewcount.Reason, n int) {
		for range n {
			rows = append(rows, viewcount.Verdict{Event: viewcount.Event{Time: f.clock.t, Site: site, Page: page, UA: "x",
				Visitor: uint64(len(rows))}, Reason: r, Seq: uint64(len(rows))})
		}
	}
	add("gone.example", "/a", viewcount.Valid, 5)
	add("gone.example", "/b", viewcount.Valid, 2)
	add("gone.example", "/a", viewcount.BotUA, 3)
	add("kept.example", "/a", viewcount.Valid, 4)
	add("kept.example", "/a", viewcount.BotUA, 1)
	if err := storetest.InsertFed(ctx, f.store, "", rows); err != nil {
		t.Fatal(err)
	}
	// A table added later (here by the test) is covered without naming it,
	// one with a projection too; a view with a site column is not a table
	// to delete from.
	for _, stmt := range []string{
		"CREATE TABLE later_rollup (site String, n UInt64, PROJECTION by_n (SELECT n, site ORDER BY n)) ENGINE = MergeTree ORDER BY site",
		// INSERT … SELECT: chDB reads the data of INSERT … VALUES from the
		// process's stdin when that is not a terminal.
		"INSERT INTO later_rollup SELECT if(number < 3, 'gone.example', 'kept.example'), number FROM numbers(4)",
		"CREATE VIEW later_view AS SELECT site, count() AS n FROM views_raw GROUP BY site",
	} {
		if err := f.store.Exec(ctx, stmt, nil); err != nil { // test-only SQL
			t.Fatal(err)
		}
	}
	// Rows per table with a site column, as the store holds them: the four
	// tables named here with exact counts, and any table a later migration
	// adds (the dashboard's rollups) deleted and kept alike.
	counts := func(site string) map[string]uint64 {
		t.Helper()
		return storetest.SiteRows(t, f.store, site)
	}
	// views_raw holds every event; page_rollup one row per grain and page.
	before, kept := counts("gone.example"), counts("kept.example")
	// rejected_rollup: the 3 bot_ua events in one row (one agent, one hour).
	if before["views_raw"] != 10 || before["page_rollup"] != 8 || before["rejected_rollup"] != 1 || before["later_rollup"] != 3 ||
		kept["later_rollup"] != 1 || kept["rejected_rollup"] != 1 {
		t.Fatalf("rows before: %v and %v", before, kept)
	}
	if _, ok := before["later_view"]; ok {
		t.Fatal("a view listed among the tables to delete from")
	}
	tables := slices.Sorted(maps.Keys(before))
	var list []string
	for _, table := range tables {
		list = append(list, table+": "+strconv.FormatUint(before[table], 10))
	}
	rowsJSON, _ := json.Marshal(before)
	check := func(method, path, tok string, want int, wantBody string) {
		t.Helper()
		if w := f.do(t, method, path, tok, ""); w.Code != want || w.Body.String() != wantBody {
			t.Errorf("%s %s: %d\n got %s\nwant %s", method, path, w.Code, w.Body, wantBody)
		}
	}
	check("DELETE", "/v1/admin/sites/gone.example", testAdmin, 400,
		`{"error":"confirm: required; deleting removes gone.example from the registry (its token and share link stop working) and deletes its rows in every table (`+
			strings.Join(list, ", ")+`); repeat with ?confirm=gone.example","would_delete":`+string(rowsJSON)+`}`)
	check("DELETE", "/v1/admin/sites/gone.example?confirm=kept.example", testAdmin, 400, `{"error":"confirm: must be the site's name, gone.example"}`)
	check("DELETE", "/v1/admin/sites/gone.example?confirm=gone.example", token, 401, `{"error":"missing or wrong bearer token"}`)
	if got := counts("gone.example"); !maps.Equal(got, before) || !f.sites.Known("gone.example") {
		t.Fatalf("refused deletes deleted: %v known=%v", got, f.sites.Known("gone.example"))
	}

	check("DELETE", "/v1/admin/sites/Gone.Example?confirm=gone.example", testAdmin, 200,
		`{"deleted_rows":`+string(rowsJSON)+`,"site":"gone.example"}`)
	for table, n := range counts("gone.example") {
		if n != 0 {
			t.Errorf("%s: %d rows of the deleted site left", table, n)
		}
	}
	if got := counts("kept.example"); !maps.Equal(got, kept) {
		t.Errorf("rows of the other site: %v, want %v", got, kept)
	}
	if f.sites.Known("gone.example") {
		t.Error("deleted site still registered")
	}
	check("GET", "/v1/sites/gone.example/invalid", token, 401, `{"error":"missing or wrong bearer token"}`)
	check("DELETE", "/v1/admin/sites/gone.example?confirm=gone.example", testAdmin, 404, `{"error":"site not registered"}`)
	check("DELETE", "/v1/admin/sites/gone.example", testAdmin, 404, `{"error":"site not registered"}`)

	// Rows left behind by a name no longer registered (here: hits judged
	// unknown_site after the delete) can be deleted too.
	f.seq = 1000
	if err := storetest.InsertFed(ctx, f.store, "", []viewcount.Verdict{{Event: viewcount.Event{Time: f.clock.t, Site: "gone.example", Page: "/a", UA: "x"},
		Reason: viewcount.UnknownSite, Seq: 1000}}); err != nil {
		t.Fatal(err)
	}
	// views_raw holds the one event; rollups of rejected events (the
	// dashboard's filtered panel) hold whatever they make of it.
	after := counts("gone.example")
	if after["views_raw"] != 1 || after["page_rollup"] != 0 || after["rejected_rollup"] != 1 || after["later_rollup"] != 0 {
		t.Fatalf("rows left behind: %v", after)
	}
	rowsJSON, _ = json.Marshal(after)
	check("DELETE", "/v1/admin/sites/gone.example?confirm=gone.example", testAdmin, 200,
		`{"deleted_rows":`+string(rowsJSON)+`,"site":"gone.example"}`)
}
