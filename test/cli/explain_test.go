package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/api"
	"github.com/viewcount/viewcount/test/apptest"
	"github.com/viewcount/viewcount/validate/judge"
)

// TestExplain asks `viewcount explain` why a stored view was rejected and
// what the rules make of a request nobody sent: each answer names the
// rule, its decision and its evidence, through the admin API.
func TestExplain(t *testing.T) {
	const site = "explain.example"
	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	c.AddSite(site)
	if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(11), UA: "python-requests/2.32.3", Site: site, Page: "/a", ID: "ev-bot-1"}); code != http.StatusOK {
		t.Fatalf("hit: %d", code)
	}
	if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(12), UA: apptest.FirefoxUA, Site: site, Page: "/a", ID: "ev-ok-1"}); code != http.StatusOK {
		t.Fatalf("hit: %d", code)
	}
	apptest.Eventually(t, time.Minute, func() string {
		if r := apptest.Reasons(t, m, site); r["bot_ua"] != 1 || r["valid"] != 1 {
			return fmt.Sprintf("stored: %v, want 1 bot_ua and 1 valid", r)
		}
		return ""
	})
	flags := []string{"--server", "http://" + m.Addr(), "--admin-token", apptest.AdminToken}
	explain := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if err := run("explain", append(args, flags...), &out, &errOut); err != nil {
			t.Fatalf("explain %v: %v\n%s", args, err, errOut.String())
		}
		return Squeeze(out.String())
	}

	got := explain("--site", site, "--id", "ev-bot-1")
	for _, want := range []string{"event ev-bot-1 of explain.example", "stored verdict: bot_ua", "say: bot_ua",
		"\nbot_ua rejects ", "python-requests", "\nunknown_site passes "} {
		if !strings.Contains(got, want) {
			t.Errorf("explain of a stored bot view lacks %q:\n%s", want, got)
		}
	}
	if got := explain("--site", site, "--id", "ev-ok-1"); !strings.Contains(got, "stored verdict: valid") ||
		!strings.Contains(got, "\nbot_ua passes ") || !strings.Contains(got, "\nheader_mismatch passes ") {
		t.Errorf("explain of a stored valid view:\n%s", got)
	}

	// One sample request, as JSON: the rule that rejects and the token
	// that made it.
	var out, errOut bytes.Buffer
	if err := run("explain", append([]string{"--site", site, "--ua", "curl/8.9.1", "--ip", "81.2.69.160", "--json"}, flags...), &out, &errOut); err != nil {
		t.Fatalf("explain sample: %v\n%s", err, errOut.String())
	}
	var ans struct {
		Status int                 `json:"status"`
		Events []judge.Explanation `json:"events"`
	}
	if err := json.Unmarshal(out.Bytes(), &ans); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if ans.Status != http.StatusOK || len(ans.Events) != 1 || ans.Events[0].Verdict != "bot_ua" {
		t.Fatalf("sample answer: %+v", ans)
	}
	var step string
	for _, s := range ans.Events[0].Steps {
		if s.Rule == "bot_ua" {
			step = s.Decision + " " + s.Evidence
		}
	}
	if !strings.HasPrefix(step, "rejects") || !strings.Contains(strings.ToLower(step), "curl") {
		t.Errorf("bot_ua step of a curl sample: %q", step)
	}
	// A sample for an unregistered site: the rule that says so.
	// the headers Firefox sends with an image.
	if got := explain("--site", "nobody.example", "--ua", apptest.FirefoxUA, "-H", "Accept: image/avif,image/webp,*/*", "-H", "Accept-Language: en-GB,en;q=0.5",
		"-H", "Sec-Fetch-Dest: image", "-H", "Sec-Fetch-Mode: no-cors", "-H", "Sec-Fetch-Site: cross-site"); !strings.Contains(got, "verdict: unknown_site") {
		t.Errorf("sample of an unknown site:\n%s", got)
	}
	// A sample ingest refuses says so, with nothing to judge.
	if got := explain("--url", "/p.gif?page=/a", "--ua", apptest.FirefoxUA); !strings.Contains(got, "ingest answered 400") {
		t.Errorf("sample without a site:\n%s", got)
	}

	// The API refuses what is no sample of ours, and an unknown event is 404.
	post := func(req api.SampleRequest) (int, string) {
		b, _ := json.Marshal(req)
		r, _ := http.NewRequest(http.MethodPost, c.Base+"/v1/admin/explain", bytes.NewReader(b))
		r.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
		r.Header.Set("Content-Type", "application/json")
		code, body := c.Do(r)
		return code, string(body)
	}
	for _, bad := range []api.SampleRequest{
		{URL: "http://evil.example/p.gif?site=" + site},
		{URL: "/v1/admin/sites"},
		{Method: "POST", URL: "/p.gif?site=" + site},
		{URL: "/p.gif?site=" + site, IP: "not-an-ip"},
		{URL: "/p.gif?site=" + site, Headers: map[string]string{"X-Bad\n": "1"}},
		{URL: "/p.gif?site=" + site, Headers: map[string]string{"X-Bad": "a\r\nb"}},
	} {
		if code, body := post(bad); code != http.StatusBadRequest {
			t.Errorf("sample %+v: %d %s, want 400", bad, code, body)
		}
	}
	r, _ := http.NewRequest(http.MethodGet, c.Base+"/v1/admin/explain?site="+site+"&id=nope", nil)
	r.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
	if code, body := c.Do(r); code != http.StatusNotFound {
		t.Errorf("unknown event: %d %s, want 404", code, body)
	}
	r, _ = http.NewRequest(http.MethodGet, c.Base+"/v1/admin/explain?site="+site+"&id=ev-bot-1", nil)
	if code, _ := c.Do(r); code != http.StatusUnauthorized {
		t.Errorf("without the admin token: %d, want 401", code)
	}
}
