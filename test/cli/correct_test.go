package cli

import (
	"bytes"
	"fmt"
	"github.com/viewcount/viewcount/test/apptest"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestCorrections: an operator excludes a referral ring for a time range;
// the ring's past views leave the counts (verdict excluded), a view in the
// range arriving afterwards is excluded by the validators at once, the
// audit trail says who and why, and undoing it brings the views back.
func TestCorrections(t *testing.T) {
	const site = "corr.example"
	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	c.AddSite(site)
	start := time.Now().UTC().Add(-time.Second)
	ring := func(i int) int {
		q := url.Values{"site": {site}, "page": {"/c"}, "ref": {"https://a.ring.example/promo"}}
		req, _ := http.NewRequest("GET", c.Base+"/p.gif?"+q.Encode(), nil)
		req.Header.Set("X-Forwarded-For", apptest.VisitorIP(500+i))
		req.Header.Set("User-Agent", apptest.ChromeUA)
		code, _ := c.Do(req)
		return code
	}
	for i := range 12 {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.FirefoxUA, Site: site, Page: "/c"}); code != http.StatusOK {
			t.Fatalf("hit: %d", code)
		}
		if code := ring(i); code != http.StatusOK {
			t.Fatalf("ring hit: %d", code)
		}
	}
	waitViews := func(want uint64) {
		t.Helper()
		apptest.Eventually(t, time.Minute, func() string {
			if _, b, _ := c.Count(site, "/c"); b.Views != want {
				return fmt.Sprintf("%d views of /c, want %d", b.Views, want)
			}
			return ""
		})
	}
	waitViews(24)

	flags := []string{"--server", "http://" + m.Addr(), "--admin-token", apptest.AdminToken}
	var out, progress bytes.Buffer
	end := time.Now().UTC().Add(time.Hour) // reaches into the future: new ring views are excluded too
	err := run("correct", append([]string{"add", "--site", site, "--kind", "referrer", "--value", "ring.example",
		"--from", start.Format(time.RFC3339Nano), "--to", end.Format(time.RFC3339Nano), "--who", "ops", "--why", "referral ring"}, flags...), &out, &progress)
	if err != nil {
		t.Fatalf("correct add: %v\n%s", err, progress.String())
	}
	if !strings.Contains(out.String(), "12 verdicts changed") || !strings.Contains(out.String(), "valid  excluded  12") {
		t.Errorf("correct add printed:\n%s", out.String())
	}
	id := strings.Fields(out.String())[1]
	if r := apptest.Reasons(t, m, site); r["excluded"] != 12 || r["valid"] != 12 {
		t.Fatalf("after the correction: %v", r)
	}
	waitViews(12)
	if code := ring(99); code != http.StatusOK {
		t.Fatalf("ring hit: %d", code)
	}
	apptest.Eventually(t, time.Minute, func() string {
		if r := apptest.Reasons(t, m, site); r["excluded"] != 13 {
			return fmt.Sprintf("a new ring view: %v, want 13 excluded", r)
		}
		return ""
	})

	out.Reset()
	if err := run("correct", append([]string{"list"}, flags...), &out, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), id+"  active  corr.example  referrer  ring.example") || !strings.Contains(out.String(), "ops       referral ring") {
		t.Errorf("list:\n%s", out.String())
	}
	out.Reset()
	if err := run("correct", append([]string{"undo", id, "--who", "ops", "--why", "was a partner"}, flags...), &out, &progress); err != nil {
		t.Fatalf("undo: %v\n%s", err, progress.String())
	}
	if r := apptest.Reasons(t, m, site); r["excluded"] != 0 || r["valid"] != 25 {
		t.Fatalf("after the undo: %v", r)
	}
	waitViews(25)
	out.Reset()
	if err := run("correct", append([]string{"list", "--json"}, flags...), &out, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"state": "undone"`) || !strings.Contains(out.String(), `"undone_why": "was a partner"`) {
		t.Errorf("list after undo:\n%s", out.String())
	}
	if err := run("correct", append([]string{"undo", id, "--why", "again"}, flags...), &out, &progress); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("undo twice: %v, want a 404", err)
	}
	rep, err := apptest.Reconcile(t, m, start.Add(-time.Hour), end)
	if err != nil || !rep.OK() {
		t.Errorf("reconcile: %v %+v", err, rep)
	}
}

// TestAllowCorrection: a site's own app signs its in-app browser's user
// agent with a URL, so its readers' views are rejected as bot_ua. The
// operator allows them: the past views count (the revalidation changes
// their verdicts), a new one counts at once, an exclusion of one page still
// wins over the allow, undoing it rejects them again, and reconcile finds
// the rollups and views_raw agreeing throughout.
func TestAllowCorrection(t *testing.T) {
	const site = "allow.example"
	const appUA = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 AllowApp/3.2 (+https://allowapp.example/about)"
	m := apptest.Start(t, t.TempDir(), apptest.NewDB())
	c := apptest.NewClient(t, m)
	c.AddSite(site)
	start := time.Now().UTC().Add(-time.Second)
	for i := range 10 {
		page := "/a"
		if i >= 8 {
			page = "/private"
		}
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(700 + i), UA: appUA, Site: site, Page: page}); code != http.StatusOK {
			t.Fatalf("app hit: %d", code)
		}
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(800 + i), UA: apptest.FirefoxUA, Site: site, Page: "/b"}); code != http.StatusOK {
			t.Fatalf("hit: %d", code)
		}
	}
	apptest.Eventually(t, time.Minute, func() string {
		if r := apptest.Reasons(t, m, site); r["bot_ua"] != 10 || r["valid"] != 10 {
			return fmt.Sprintf("before the correction: %v, want 10 bot_ua and 10 valid", r)
		}
		return ""
	})

	flags := []string{"--server", "http://" + m.Addr(), "--admin-token", apptest.AdminToken}
	end := time.Now().UTC().Add(time.Hour)
	var out, progress bytes.Buffer
	// The exclusion first: the allow must not undo it.
	if err := run("correct", append([]string{"add", "--site", site, "--kind", "path", "--value", "/private",
		"--from", start.Format(time.RFC3339Nano), "--to", end.Format(time.RFC3339Nano), "--why", "staff pages"}, flags...), &out, &progress); err != nil {
		t.Fatalf("correct add path: %v\n%s", err, progress.String())
	}
	out.Reset()
	err := run("correct", append([]string{"add", "--site", site, "--kind", "allow", "--ua", "AllowApp/", "--reason", "bot_ua",
		"--from", start.Format(time.RFC3339Nano), "--to", end.Format(time.RFC3339Nano), "--who", "ops", "--why", "our own app signs its user agent"}, flags...), &out, &progress)
	if err != nil {
		t.Fatalf("correct add allow: %v\n%s", err, progress.String())
	}
	if got := Squeeze(out.String()); !strings.Contains(got, "10 verdicts changed") || !strings.Contains(got, "\nbot_ua valid 8\n") || !strings.Contains(got, "\nbot_ua excluded 2\n") {
		t.Errorf("correct add printed:\n%s", out.String())
	}
	id := strings.Fields(out.String())[1]
	if r := apptest.Reasons(t, m, site); r["valid"] != 18 || r["excluded"] != 2 || r["bot_ua"] != 0 {
		t.Fatalf("after the allow: %v, want 18 valid and 2 excluded", r)
	}
	apptest.Eventually(t, time.Minute, func() string {
		if _, b, _ := c.Count(site, "/a"); b.Views != 8 {
			return fmt.Sprintf("%d views of /a, want 8", b.Views)
		}
		return ""
	})
	if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(799), UA: appUA, Site: site, Page: "/a"}); code != http.StatusOK {
		t.Fatalf("app hit: %d", code)
	}
	apptest.Eventually(t, time.Minute, func() string {
		if r := apptest.Reasons(t, m, site); r["valid"] != 19 {
			return fmt.Sprintf("a new app view: %v, want 19 valid", r)
		}
		return ""
	})

	out.Reset()
	if err := run("correct", append([]string{"list"}, flags...), &out, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(Squeeze(out.String()), id+" active allow.example allow reason=bot_ua&ua=AllowApp/ ") {
		t.Errorf("list:\n%s", out.String())
	}
	out.Reset()
	if err := run("correct", append([]string{"undo", id, "--why", "the app dropped the URL"}, flags...), &out, &progress); err != nil {
		t.Fatalf("undo: %v\n%s", err, progress.String())
	}
	// bot_ua comes before excluded: the excluded pages are bot_ua again.
	if r := apptest.Reasons(t, m, site); r["bot_ua"] != 11 || r["valid"] != 10 || r["excluded"] != 0 {
		t.Fatalf("after the undo: %v, want 11 bot_ua and 10 valid", r)
	}
	apptest.Eventually(t, time.Minute, func() string {
		if _, b, _ := c.Count(site, "/a"); b.Views != 0 {
			return fmt.Sprintf("%d views of /a after the undo, want 0", b.Views)
		}
		return ""
	})
	rep, err := apptest.Reconcile(t, m, start.Add(-time.Hour), end)
	if err != nil || !rep.OK() {
		t.Errorf("reconcile: %v %+v", err, rep)
	}

	// Wrong as asked: the terms only with kind allow, a reason no allow
	// restores.
	for _, args := range [][]string{
		{"--kind", "path", "--ua", "x", "--value", "/x"},
		{"--kind", "allow", "--reason", "duplicate"},
		{"--kind", "allow", "--ua", "x", "--value", "ua=y"},
	} {
		err := run("correct", append(append([]string{"add", "--site", site, "--from", start.Format(time.RFC3339), "--to", end.Format(time.RFC3339), "--why", "w"}, args...), flags...), &out, &progress)
		if err == nil || !strings.Contains(err.Error(), "400") {
			t.Errorf("correct add %q: %v, want a 400", args, err)
		}
	}
}

// squeeze collapses runs of spaces, so rows compare without the table's
// padding.
func Squeeze(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}
