package app

import (
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestEveryAnswerIsNoSniff walks every route the server registers (so a
// route added later is covered without touching this test), asks each
// once as the admin, once with a wrong token and once as JSON-wanting
// CSV, plus a path no route has and a method a route lacks, and checks
// that every JSON, NDJSON or CSV answer carries X-Content-Type-Options:
// nosniff (a browser must not run an answer that echoes a page path or a
// site name as HTML or script). Found by an attacker's probe: the API's
// JSON and CSV answers had no such header.
func TestEveryAnswerIsNoSniff(t *testing.T) {
	m := Start(t, t.TempDir(), NewDB())
	c := NewClient(t, m)
	const site = "sniff.example"
	c.AddSite(site)
	engine, ok := m.http.Handler.(*gin.Engine)
	if !ok {
		t.Fatalf("the server's handler is a %T, not the gin engine", m.http.Handler)
	}
	fill := strings.NewReplacer(":site", site, ":file", site+".svg", ":id", "0123abcd", "*file", "app.js", "*rest", "x")
	seen := map[string]int{}
	check := func(method, path, token, accept string) {
		t.Helper()
		req, err := http.NewRequest(method, c.Base+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := c.HTTP.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch mt {
		case "application/json", "application/x-ndjson", "text/csv":
			seen[mt]++
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s %s (token %t, Accept %q): %d %s without X-Content-Type-Options: nosniff (got %q)",
					method, path, token != "", accept, resp.StatusCode, mt, got)
			}
		}
	}
	routes := engine.Routes()
	for _, r := range routes {
		// DELETE /v1/admin/sites/:site without ?confirm only says what
		// would go, so every route is safe to ask.
		path := fill.Replace(r.Path)
		for _, token := range []string{AdminToken, "wrong-token", ""} {
			check(r.Method, path, token, "")
		}
		check(r.Method, path, AdminToken, "text/csv")
	}
	check(http.MethodGet, "/no/such/route", "", "")
	check(http.MethodPut, "/v1/sites/"+site+"/count", "", "")
	if len(routes) < 30 || seen["application/json"] < 60 || seen["text/csv"] < 3 {
		t.Fatalf("the walk reached too little: %d routes, answers by type %v", len(routes), seen)
	}
}
