package api

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// do sends method path with a bearer token ("" = none) and body.
func (f *fixture) do(t *testing.T, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	return w
}

func TestShareLinks(t *testing.T) {
	f := newFixture(t)
	_, siteToken, err := f.sites.Add(context.Background(), "share.example")
	if err != nil {
		t.Fatal(err)
	}
	const report = "/v1/sites/share.example/invalid"
	share := func(token string) (string, int) {
		t.Helper()
		w := f.do(t, "POST", "/v1/sites/share.example/share", token, "")
		if w.Code != 201 {
			return w.Body.String(), w.Code
		}
		var out shareResponse
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.Token, "vcr_") || len(out.Token) != 52 || out.URL != "/dashboard/share.example#share="+out.Token {
			t.Fatalf("share answer %s", w.Body)
		}
		return out.Token, w.Code
	}
	status := func(method, path, token string) int {
		t.Helper()
		return f.do(t, method, path, token, "").Code
	}

	first, code := share(siteToken)
	if code != 201 {
		t.Fatalf("create with the site token: %d %s", code, first)
	}
	if c := status("GET", report, first); c != 200 {
		t.Errorf("report with the share token: %d, want 200", c)
	}
	// A share link reads; it cannot make or revoke links.
	if _, c := share(first); c != 401 {
		t.Errorf("create with a share token: %d, want 401", c)
	}
	if c := status("DELETE", "/v1/sites/share.example/share", first); c != 401 {
		t.Errorf("revoke with a share token: %d, want 401", c)
	}
	// One link per site: a new one replaces the old at once.
	second, code := share(testAdmin)
	if code != 201 || second == first {
		t.Fatalf("create with the admin token: %d", code)
	}
	if c := status("GET", report, first); c != 401 {
		t.Errorf("replaced share token: %d, want 401", c)
	}
	if c := status("GET", report, second); c != 200 {
		t.Errorf("new share token: %d, want 200", c)
	}
	// Revoking takes effect at once and can be repeated.
	for range 2 {
		if c := status("DELETE", "/v1/sites/share.example/share", siteToken); c != 204 {
			t.Fatalf("revoke: %d, want 204", c)
		}
	}
	if c := status("GET", report, second); c != 401 {
		t.Errorf("revoked share token: %d, want 401", c)
	}
	if c := status("GET", report, siteToken); c != 200 {
		t.Errorf("site token after revoke: %d, want 200", c)
	}

	// An unknown site answers as a wrong token does; only the admin hears 404.
	for _, tc := range []struct {
		method, path, token string
		want                int
	}{
		{"POST", "/v1/sites/other.example/share", siteToken, 401},
		{"POST", "/v1/sites/other.example/share", second, 401},
		{"DELETE", "/v1/sites/other.example/share", siteToken, 401},
		{"GET", "/v1/sites/other.example/invalid", siteToken, 401},
		{"POST", "/v1/sites/share.example/share", "", 401},
		{"POST", "/v1/sites/share.example/share", "vcr_wrong", 401},
		{"POST", "/v1/sites/other.example/share", testAdmin, 404},
		{"DELETE", "/v1/sites/other.example/share", testAdmin, 404},
		{"POST", "/v1/sites/not%20a%20site/share", siteToken, 400},
	} {
		if c := status(tc.method, tc.path, tc.token); c != tc.want {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, c, tc.want)
		}
	}
}

// decode checks w's status and decodes its JSON body into v.
func decode(t *testing.T, w *httptest.ResponseRecorder, code int, v any) {
	t.Helper()
	if w.Code != code {
		t.Fatalf("status %d %s, want %d", w.Code, w.Body, code)
	}
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		t.Fatalf("decode %s: %v", w.Body, err)
	}
}

// TestRotateRevokesShare: a share link made with a site token kept
// working after that token was rotated (found by an attacker's probe: who
// held a leaked site token kept a read-only link after the rotation meant
// to lock them out). Rotating now revokes the site's share link, and says
// so; ?keep_share=true keeps it, for a rotation that is routine.
func TestRotateRevokesShare(t *testing.T) {
	f := newFixture(t)
	_, siteToken, err := f.sites.Add(context.Background(), "rot.example")
	if err != nil {
		t.Fatal(err)
	}
	const report = "/v1/sites/rot.example/invalid"
	share := func(token string) string {
		t.Helper()
		var out shareResponse
		decode(t, f.do(t, "POST", "/v1/sites/rot.example/share", token, ""), 201, &out)
		return out.Token
	}
	rotate := func(query string) (token, shareLink string) {
		t.Helper()
		var out struct {
			Site, Token string
			ShareLink   string `json:"share_link"`
		}
		decode(t, f.do(t, "POST", "/v1/admin/sites/rot.example/token"+query, testAdmin, ""), 200, &out)
		if out.Site != "rot.example" || !strings.HasPrefix(out.Token, "vcs_") {
			t.Fatalf("rotate answer %+v", out)
		}
		return out.Token, out.ShareLink
	}
	link := share(siteToken)
	newToken, said := rotate("")
	if said != "revoked" {
		t.Errorf("rotate with a link: share_link %q, want revoked", said)
	}
	for token, want := range map[string]int{link: 401, siteToken: 401, newToken: 200} {
		if c := f.do(t, "GET", report, token, "").Code; c != want {
			t.Errorf("after the rotation, %.8s…: %d, want %d", token, c, want)
		}
	}
	var info struct {
		Sites []struct {
			Site   string
			Shared bool
		}
	}
	decode(t, f.do(t, "GET", "/v1/admin/sites", testAdmin, ""), 200, &info)
	if len(info.Sites) != 1 || info.Sites[0].Shared {
		t.Errorf("site list after the rotation: %+v, want not shared", info.Sites)
	}
	if newToken, said = rotate(""); said != "none" {
		t.Errorf("rotate without a link: share_link %q, want none", said)
	}

	// Kept on request: the link made with the old token still reads.
	link = share(newToken)
	kept, said := rotate("?keep_share=true")
	if said != "kept" {
		t.Errorf("rotate ?keep_share=true: share_link %q, want kept", said)
	}
	if c := f.do(t, "GET", report, link, "").Code; c != 200 {
		t.Errorf("kept link after the rotation: %d, want 200", c)
	}
	if c := f.do(t, "GET", report, kept, "").Code; c != 200 {
		t.Errorf("new token: %d, want 200", c)
	}
	if c := f.do(t, "POST", "/v1/admin/sites/rot.example/token?keep_share=maybe", testAdmin, "").Code; c != 400 {
		t.Errorf("keep_share=maybe: %d, want 400", c)
	}
}
