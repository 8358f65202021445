package api

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/internal/httpserve"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
)

func TestAdminTokens(t *testing.T) {
	f := newFixture(t)
	tokens, err := stream.OpenTokens(t.Context(), streamtest.Open(t, 1), f.clock.now)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Config{AdminToken: testAdmin}, f.snap, f.store, f.sites, nil, discard(), f.clock.now)
	if err != nil {
		t.Fatal(err)
	}
	e, err := httpserve.NewEngine(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.TokenRoutes(e, tokens)
	call := func(method, path, auth, body string, want int) string {
		t.Helper()
		w := httptest.NewRecorder()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		if auth != "" {
			r.Header.Set("Authorization", "Bearer "+auth)
		}
		e.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("%s %s %s: got %d %s, want %d", method, path, body, w.Code, w.Body, want)
		}
		return w.Body.String()
	}
	call("POST", "/v1/admin/tokens", "", `{"role":"analyst"}`, 401)
	call("POST", "/v1/admin/tokens", "wrong", `{"role":"analyst"}`, 401)
	if got := call("POST", "/v1/admin/tokens", testAdmin, `{"role":"admin"}`, 400); !strings.Contains(got, `role: want \"analyst\"`) {
		t.Errorf("bad role: %s", got)
	}
	call("POST", "/v1/admin/tokens", testAdmin, `{"role":"analyst","note":"`+strings.Repeat("n", 201)+`"}`, 400)
	call("POST", "/v1/admin/tokens", testAdmin, `{"role":`, 400)

	var added struct{ ID, Role, Note, Token, Created string }
	if err := json.Unmarshal([]byte(call("POST", "/v1/admin/tokens", testAdmin, `{"role":"analyst","note":"grafana"}`, 201)), &added); err != nil {
		t.Fatal(err)
	}
	if added.Role != "analyst" || added.Note != "grafana" || added.Created != "2026-11-29T12:00:00Z" || !strings.HasPrefix(added.Token, "vcq_"+added.ID+"_") {
		t.Errorf("added: %+v", added)
	}
	if _, err := tokens.Check(t.Context(), added.Token); err != nil {
		t.Errorf("new token does not check: %v", err)
	}
	want := `{"tokens":[{"id":"` + added.ID + `","role":"analyst","note":"grafana","created":"2026-11-29T12:00:00Z"}]}`
	if got := call("GET", "/v1/admin/tokens", testAdmin, "", 200); got != want {
		t.Errorf("list: %s, want %s", got, want)
	}
	call("GET", "/v1/admin/tokens", "", "", 401)
	call("DELETE", "/v1/admin/tokens/"+added.ID, "", "", 401)
	call("DELETE", "/v1/admin/tokens/"+added.ID, testAdmin, "", 204)
	call("DELETE", "/v1/admin/tokens/"+added.ID, testAdmin, "", 404)
	if _, err := tokens.Check(t.Context(), added.Token); err == nil {
		t.Error("revoked token still checks")
	}
	if got := call("GET", "/v1/admin/tokens", testAdmin, "", 200); got != `{"tokens":[]}` {
		t.Errorf("list after revoke: %s", got)
	}
}
