package main

import (
	"bytes"
	"fmt"
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
	m := startMain(t, t.TempDir(), newDB())
	c := newClient(t, m)
	c.addSite(site)
	start := time.Now().UTC().Add(-time.Second)
	ring := func(i int) int {
		q := url.Values{"site": {site}, "page": {"/c"}, "ref": {"https://a.ring.example/promo"}}
		req, _ := http.NewRequest("GET", c.base+"/p.gif?"+q.Encode(), nil)
		req.Header.Set("X-Forwarded-For", visitorIP(500+i))
		req.Header.Set("User-Agent", chromeUA)
		code, _ := c.do(req)
		return code
	}
	for i := range 12 {
		if code := c.send(hit{ip: visitorIP(i), ua: firefoxUA, site: site, page: "/c"}); code != http.StatusOK {
			t.Fatalf("hit: %d", code)
		}
		if code := ring(i); code != http.StatusOK {
			t.Fatalf("ring hit: %d", code)
		}
	}
	waitViews := func(want uint64) {
		t.Helper()
		eventually(t, time.Minute, func() string {
			if _, b, _ := c.count(site, "/c"); b.Views != want {
				return fmt.Sprintf("%d views of /c, want %d", b.Views, want)
			}
			return ""
		})
	}
	waitViews(24)

	flags := []string{"--server", "http://" + m.Addr(), "--admin-token", adminToken}
	var out, progress bytes.Buffer
	end := time.Now().UTC().Add(time.Hour) // reaches into the future: new ring views are excluded too
	err := runCorrect(append([]string{"add", "--site", site, "--kind", "referrer", "--value", "ring.example",
		"--from", start.Format(time.RFC3339Nano), "--to", end.Format(time.RFC3339Nano), "--who", "ops", "--why", "referral ring"}, flags...), &out, &progress)
	if err != nil {
		t.Fatalf("correct add: %v\n%s", err, progress.String())
	}
	if !strings.Contains(out.String(), "12 verdicts changed") || !strings.Contains(out.String(), "valid  excluded  12") {
		t.Errorf("correct add printed:\n%s", out.String())
	}
	id := strings.Fields(out.String())[1]
	if r := reasons(t, m, site); r["excluded"] != 12 || r["valid"] != 12 {
		t.Fatalf("after the correction: %v", r)
	}
	waitViews(12)
	if code := ring(99); code != http.StatusOK {
		t.Fatalf("ring hit: %d", code)
	}
	eventually(t, time.Minute, func() string {
		if r := reasons(t, m, site); r["excluded"] != 13 {
			return fmt.Sprintf("a new ring view: %v, want 13 excluded", r)
		}
		return ""
	})

	out.Reset()
	if err := runCorrect(append([]string{"list"}, flags...), &out, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), id+"  active  corr.example  referrer  ring.example") || !strings.Contains(out.String(), "ops       referral ring") {
		t.Errorf("list:\n%s", out.String())
	}
	out.Reset()
	if err := runCorrect(append([]string{"undo", id, "--who", "ops", "--why", "was a partner"}, flags...), &out, &progress); err != nil {
		t.Fatalf("undo: %v\n%s", err, progress.String())
	}
	if r := reasons(t, m, site); r["excluded"] != 0 || r["valid"] != 25 {
		t.Fatalf("after the undo: %v", r)
	}
	waitViews(25)
	out.Reset()
	if err := runCorrect(append([]string{"list", "--json"}, flags...), &out, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"state": "undone"`) || !strings.Contains(out.String(), `"undone_why": "was a partner"`) {
		t.Errorf("list after undo:\n%s", out.String())
	}
	if err := runCorrect(append([]string{"undo", id, "--why", "again"}, flags...), &out, &progress); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("undo twice: %v, want a 404", err)
	}
	rep, err := reconcile(t.Context(), m.store, start.Add(-time.Hour), end, time.Now())
	if err != nil || !rep.ok() {
		t.Errorf("reconcile: %v %+v", err, rep)
	}
}
