package api

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestSiteSettings: a site's owner reads and sets engaged_after and
// count_mode with the site's token (the admin's works too; a share
// token is 403, no token or another's 401); a bad value gets the admin
// PATCH's 400, word for word, and changes nothing; the public count
// follows the mode set.
func TestSiteSettings(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const site = "own.example"
	_, siteToken, err := f.sites.Add(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	_, otherToken, err := f.sites.Add(ctx, "other.example")
	if err != nil {
		t.Fatal(err)
	}
	share, err := f.sites.CreateShare(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	f.snap.CountBy(f.sites.Counting)
	now := f.clock.t
	f.engagedHistory(t, site, []engagedView{
		{now.Add(-26 * time.Hour), "/a", 15_000},               // engaged
		{now.Add(-26*time.Hour + time.Minute), "/a", 4_000},    // reported, not engaged
		{now.Add(-26*time.Hour + 2*time.Minute), "/a", -1},     // never reported
		{now.Add(-26*time.Hour + 3*time.Minute), "/a", 20_000}, // engaged, not at 25 s
	})

	const path = "/v1/sites/" + site + "/settings"
	req := func(method, p, token, body string, want int, wantBody string) {
		t.Helper()
		w := f.do(t, method, p, token, body)
		if w.Code != want || wantBody != "" && w.Body.String() != wantBody {
			t.Errorf("%s %s %s with %q: %d %s, want %d %s", method, p, body, token, w.Code, w.Body, want, wantBody)
		}
		if want == 200 && w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", method, p, w.Header().Get("Cache-Control"))
		}
	}
	views := `{"site":"own.example","engaged_after":10,"count_mode":"views","embed_origins":[]}`
	const forbidden = `{"error":"a share link is read-only: this needs the site's token"}`
	const unauthorised = `{"error":"missing or wrong bearer token"}`
	for _, c := range []struct {
		method, path, token, body string
		want                      int
		wantBody                  string
	}{
		{"GET", path, siteToken, "", 200, views},
		{"GET", path, testAdmin, "", 200, views},
		{"GET", path, share, "", 403, forbidden},
		{"PATCH", path, share, `{"count_mode":"engaged"}`, 403, forbidden},
		{"GET", path, "", "", 401, unauthorised},
		{"GET", path, "vcs_wrong", "", 401, unauthorised},
		{"GET", path, otherToken, "", 401, unauthorised},
		{"PATCH", path, otherToken, `{"count_mode":"engaged"}`, 401, unauthorised},
		{"GET", "/v1/sites/none.example/settings", siteToken, "", 401, unauthorised},
		{"GET", "/v1/sites/none.example/settings", testAdmin, "", 404, `{"error":"site not registered"}`},
		{"PATCH", "/v1/sites/none.example/settings", testAdmin, `{"count_mode":"engaged"}`, 404, `{"error":"site not registered"}`},
		{"GET", "/v1/sites/bad..example/settings", siteToken, "", 400, `{"error":"site: not a domain name"}`},
	} {
		req(c.method, c.path, c.token, c.body, c.want, c.wantBody)
	}

	// Bad values: the admin PATCH's 400s, the same words; the bodies'
	// shape is the owner's two fields.
	for _, body := range []string{`{"engaged_after":11}`, `{"engaged_after":0}`, `{"engaged_after":-5}`, `{"engaged_after":7200,"count_mode":"views"}`,
		`{"count_mode":"likes"}`, `{"count_mode":"Engaged"}`, `{"count_mode":"engaged","engaged_after":13}`} {
		admin := f.do(t, "PATCH", "/v1/admin/sites/"+site, testAdmin, body)
		owner := f.do(t, "PATCH", path, siteToken, body)
		if admin.Code != 400 || owner.Code != 400 || owner.Body.String() != admin.Body.String() {
			t.Errorf("PATCH %s: owner %d %s, admin %d %s; want the same 400", body, owner.Code, owner.Body, admin.Code, admin.Body)
		}
	}
	const want = `{\"engaged_after\":10}, {\"count_mode\":\"engaged\"}, {\"embed_origins\":[\"https://blog.example.com\"]} or several`
	for _, c := range []struct{ body, want string }{
		{`{}`, `{"error":"body: engaged_after, count_mode or embed_origins required"}`},
		{`not json`, `{"error":"body: want ` + want + `"}`},
		{`{"engaged_after":"10"}`, `{"error":"body: want ` + want + `"}`},
		{`{"count_mode":"engaged","color":"red"}`, `{"error":"body: unknown field \"color\" (want ` + want + `)"}`},
		{`{"timezone":"UTC"}`, `{"error":"body: unknown field \"timezone\" (want ` + want + `)"}`},
		{`{"hostnames":["*"],"count_mode":"engaged"}`, `{"error":"body: unknown field \"hostnames\" (want ` + want + `)"}`},
	} {
		req("PATCH", path, siteToken, c.body, 400, c.want)
	}
	req("GET", path, siteToken, "", 200, views) // nothing changed

	type count struct{ Views, Uniques, Pending uint64 }
	countOf := func(page string) count {
		t.Helper()
		f.clock.t = f.clock.t.Add(time.Minute) // past the snapshot's lag: read again
		w := f.get(t, "/v1/sites/"+site+"/count?page="+page)
		var c count
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &c) != nil {
			t.Fatalf("count %s: %d %s", page, w.Code, w.Body)
		}
		return c
	}
	if got := countOf("/a"); got != (count{4, 4, 0}) {
		t.Errorf("counting views: /a %+v, want 4 views", got)
	}
	// The owner counts engaged views: the 15 and 20 s ones.
	req("PATCH", path, siteToken, `{"count_mode":"engaged"}`, 200, `{"site":"own.example","engaged_after":10,"count_mode":"engaged","embed_origins":[]}`)
	if got := countOf("/a"); got != (count{2, 2, 0}) {
		t.Errorf("counting engaged views: /a %+v, want 2", got)
	}
	// The admin moves the threshold to 20 s; the owner reads it.
	req("PATCH", path, testAdmin, `{"engaged_after":20}`, 200, `{"site":"own.example","engaged_after":20,"count_mode":"engaged","embed_origins":[]}`)
	req("GET", path, siteToken, "", 200, `{"site":"own.example","engaged_after":20,"count_mode":"engaged","embed_origins":[]}`)
	if got := countOf("/a"); got != (count{1, 1, 0}) {
		t.Errorf("engaged after 20 s: /a %+v, want 1", got)
	}
	// Both at once, back to the defaults, stored as none.
	req("PATCH", path, siteToken, `{"engaged_after":10,"count_mode":"views"}`, 200, views)
	if got, _ := f.sites.Get(ctx, site); got.EngagedAfter != 0 || got.CountMode != "" {
		t.Errorf("defaults stored as %d %q, want none", got.EngagedAfter, got.CountMode)
	}
	if got := countOf("/a"); got != (count{4, 4, 0}) {
		t.Errorf("back to views: /a %+v, want 4", got)
	}

	// Embed origins (docs/dashboard.md, "Embedding"): normalised, a bad
	// one refused naming it and changing nothing, none clears them.
	req("PATCH", path, siteToken, `{"embed_origins":["https://Blog.Example.com/","http://localhost:8080","https://blog.example.com:443"]}`, 200,
		`{"site":"own.example","engaged_after":10,"count_mode":"views","embed_origins":["http://localhost:8080","https://blog.example.com"]}`)
	req("PATCH", path, siteToken, `{"embed_origins":["https://a.example; script-src *"]}`, 400,
		`{"error":"embed_origins: \"https://a.example; script-src *\": want an origin such as https://blog.example.com"}`)
	req("PATCH", path, share, `{"embed_origins":[]}`, 403, forbidden)
	if got, _ := f.sites.Get(ctx, site); len(got.EmbedOrigins) != 2 {
		t.Errorf("after a refused patch: %q", got.EmbedOrigins)
	}
	req("PATCH", path, siteToken, `{"embed_origins":[]}`, 200, views)
}
