package e2e

import (
	"bytes"
	"github.com/viewcount/viewcount/test/apptest"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestBadInput drives malformed requests through the whole process: each gets
// its documented answer, the pixel is always a GIF, and the process keeps
// serving afterwards.
func TestBadInput(t *testing.T) {
	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	c.AddSite("bad.example")

	post := func(ctype, body string) (int, string) {
		req, _ := http.NewRequest("POST", c.Base+"/v1/events", strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("User-Agent", apptest.ChromeUA)
		code, b := c.Do(req)
		return code, string(b)
	}
	beacon := func(body string, wantCode int, wantInError string) {
		t.Helper()
		code, b := post("application/json", body)
		if code != wantCode || !strings.Contains(b, wantInError) {
			t.Errorf("POST %.60q: %d %s; want %d containing %q", body, code, b, wantCode, wantInError)
		}
	}
	beacon(`{"site":"bad.example","page":"/ok"}`, 202, `"accepted":1`)
	beacon(`{"site":"bad.example","page":`, 400, "error")
	beacon(`not json`, 400, "error")
	beacon(`{"page":"/x"}`, 400, "site")
	beacon(`{"site":"bad.example"}`, 400, "page")
	beacon(`{"site":"bad.example","page":42}`, 400, "page")
	beacon(`[]`, 400, "error")
	beacon(`[`+strings.Repeat(`{"site":"bad.example","page":"/x"},`, 100)+`{"site":"bad.example","page":"/x"}]`, 400, "100")
	beacon(`{"site":"bad.example","page":"/`+strings.Repeat("a", 70<<10)+`"}`, 413, "error")
	beacon(`{"site":"bad.example","page":"/x\u0000y"}`, 400, "page")
	if code, _ := post("application/xml", `<x/>`); code != http.StatusUnsupportedMediaType {
		t.Errorf("xml body: %d, want 415", code)
	}

	pixel := func(q string, want int) {
		t.Helper()
		req, _ := http.NewRequest("GET", c.Base+"/p.gif?"+q, nil)
		req.Header.Set("User-Agent", apptest.ChromeUA)
		resp, err := c.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || resp.Header.Get("Content-Type") != "image/gif" || body.Len() != 43 {
			t.Errorf("pixel %.60q: %d %s %d bytes; want %d and the GIF", q, resp.StatusCode, resp.Header.Get("Content-Type"), body.Len(), want)
		}
	}
	pixel("site=bad.example&page=/fine", 200)
	pixel("", 400)
	pixel("site=bad.example", 400)
	pixel("page=/x", 400)
	pixel("site=not+a+domain&page=/x", 400)
	pixel("site=bad.example&page="+url.QueryEscape("/\xff\xfe binary"), 400)
	pixel("site=bad.example&page=/"+strings.Repeat("x", 20000), 200) // capped, still counted
	pixel("site=unknown.example&page=/x", 200)                       // durable; rejected later as unknown_site

	count := func(site, page string, want int) {
		t.Helper()
		req, _ := http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/count?page="+url.QueryEscape(page), nil)
		if code, b := c.Do(req); code != want {
			t.Errorf("count %s %.40q: %d %s, want %d", site, page, code, b, want)
		}
	}
	count("bad.example", "/fine", 200)
	count("bad..example", "/", 400)
	count("bad.example", "/"+strings.Repeat("y", 5000), 400)
	count("nope.example", "/", 200) // zeros, like a registered site without views

	req, _ := http.NewRequest("POST", c.Base+"/v1/admin/sites", strings.NewReader(`{"domain":"x.example"}`))
	if code, _ := c.Do(req); code != http.StatusUnauthorized {
		t.Errorf("admin without token: %d, want 401", code)
	}
	req, _ = http.NewRequest("POST", c.Base+"/v1/admin/sites", strings.NewReader(`{"domain":"bad.example"}`))
	req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
	if code, _ := c.Do(req); code != http.StatusConflict {
		t.Errorf("admin duplicate site: %d, want 409", code)
	}
	req, _ = http.NewRequest("POST", c.Base+"/v1/admin/sites", strings.NewReader(`{"domain":"not a domain"}`))
	req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
	if code, _ := c.Do(req); code != http.StatusBadRequest {
		t.Errorf("admin bad domain: %d, want 400", code)
	}

	// Still serving.
	for _, p := range []string{"/healthz", "/readyz", "/metrics"} {
		req, _ := http.NewRequest("GET", c.Base+p, nil)
		if code, b := c.Do(req); code != 200 {
			t.Errorf("%s: %d %s", p, code, b)
		}
	}
}
