package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/viewcount/viewcount/test/apptest"
)

// clock is a test clock running with the wall clock, moved forward by the
// test: ingest stamps each event with it, so a report can arrive "15 s"
// after its view without the test waiting 15 s.
type clock struct {
	mu   sync.Mutex
	skew time.Duration
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.skew)
}

// sameDay is the skew that keeps a test's next hour of clock time inside
// one UTC day: a visit never spans midnight (the visitor ids rotate), so a
// run started at 23:59:50 would otherwise split the test's visits.
func sameDay(now time.Time) time.Duration {
	if left := now.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour).Sub(now); left < time.Hour {
		return -time.Hour
	}
	return 0
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.skew += d
	c.mu.Unlock()
}

// post sends one beacon event as vc.js does, from ip with ua.
func post(t *testing.T, c *apptest.Client, ip, ua string, ev map[string]any) int {
	t.Helper()
	b, _ := json.Marshal(ev)
	req, _ := http.NewRequest("POST", c.Base+"/v1/events", bytes.NewReader(b))
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	req.Header.Set("X-Forwarded-For", ip)
	req.Header.Set("User-Agent", ua)
	code, _ := c.Do(req)
	return code
}

// TestEngagementEndToEnd: views and engagement reports through the real
// beacon endpoint, stream, validator and rollups. Reports are judged
// against their view (accepted, repeated, overclaimed, orphaned: a bot's
// view and an unknown id), never counted as views; the summary's visits,
// bounces, durations and engaged views are exact; the rollups agree with
// views_raw.
func TestEngagementEndToEnd(t *testing.T) {
	clk := &clock{skew: sameDay(time.Now())}
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), nil, clk.now)
	c := apptest.NewClient(t, m)
	token := c.AddSite("eng.example")
	hints := map[string]any{"sw": 1920, "sh": 1080, "lang": 2, "tz": true, "uad": false, "sec": false}
	view := func(ip, ua, page, id string) {
		t.Helper()
		if code := post(t, c, ip, ua, map[string]any{"site": "eng.example", "page": page, "id": id, "hints": hints}); code != http.StatusOK && code != http.StatusAccepted {
			t.Fatalf("view %s: %d", id, code)
		}
	}
	report := func(ip, ua, page, id string, engaged, scroll, age int) {
		t.Helper()
		ev := map[string]any{"type": "engagement", "site": "eng.example", "page": page, "id": id,
			"engaged_ms": engaged, "scroll": scroll, "age_ms": age}
		if code := post(t, c, ip, ua, ev); code != http.StatusOK && code != http.StatusAccepted {
			t.Fatalf("report %s: %d", id, code)
		}
	}
	one, two := apptest.VisitorIP(1), apptest.VisitorIP(2)
	ua := apptest.ChromeUA
	view(one, ua, "/a", "a1")
	clk.advance(15 * time.Second)
	report(one, ua, "/a", "a1", 14_000, 60, 15_000) // engaged: no longer a bounce
	clk.advance(5 * time.Second)
	view(one, ua, "/b", "b1") // the same visit, 20 s in
	clk.advance(5 * time.Second)
	report(one, ua, "/b", "b1", 4_000, 100, 5_000)
	report(one, ua, "/b", "b1", 4_000, 100, 5_000) // sent again: a repeat
	view(two, ua, "/a", "a2")
	clk.advance(3 * time.Second)
	report(two, ua, "/a", "a2", 2_000, 20, 3_000)        // a bounce
	report(two, ua, "/a", "a2", 60_000, 20, 3_100)       // a minute in 3 s: overclaimed
	view(apptest.VisitorIP(3), "curl/8.5.0", "/a", "z1") // a bot's view
	report(apptest.VisitorIP(3), "curl/8.5.0", "/a", "z1", 1_000, 0, 1_000)
	report(two, ua, "/a", "nope", 1_000, 0, 1_000) // no such view

	want := map[string]uint64{"valid": 6, "bot_ua": 1, "engagement_repeat": 1, "engagement_overclaim": 1, "engagement_orphan": 2}
	apptest.Eventually(t, 30*time.Second, func() string {
		if got := apptest.Reasons(t, m, "eng.example"); !maps.Equal(got, want) {
			return fmt.Sprintf("verdicts %v, want %v", got, want)
		}
		return ""
	})
	// The public count counts views only.
	apptest.Eventually(t, 30*time.Second, func() string {
		if _, got, _ := c.Count("eng.example", "/a"); got.Views != 2 {
			return fmt.Sprintf("/a counts %d views, want 2", got.Views)
		}
		return ""
	})
	day := clk.now().UTC().Format(time.DateOnly)
	var sum engagementSummary
	apptest.Eventually(t, 30*time.Second, func() string {
		req, _ := http.NewRequest("GET", c.Base+"/v1/sites/eng.example/stats/summary?from="+day+"&to="+day, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		code, body := c.Do(req)
		if code != http.StatusOK {
			return fmt.Sprintf("summary: %d %s", code, body)
		}
		sum = engagementSummary{}
		if err := json.Unmarshal(body, &sum); err != nil {
			return err.Error()
		}
		if sum.Views != 3 || sum.Visits != 2 || sum.Reported != 3 {
			return fmt.Sprintf("summary %s", body)
		}
		return ""
	})
	// Visit one: 25 s (its last report); two: 3 s, a bounce; plus the
	// requests' own time, since the clock runs with the wall's. Engaged
	// for 10 s or more: /a's first view only.
	if sum.EngagedViews != 1 || sum.BounceRate == nil || *sum.BounceRate != 0.5 || sum.VisitDuration == nil || math.Abs(*sum.VisitDuration-14) > 1 {
		t.Errorf("summary: engaged %d, bounce rate %v, visit duration %v; want 1, 0.5, 14", sum.EngagedViews, deref(sum.BounceRate), deref(sum.VisitDuration))
	}
	// Counting engaged views: /a's 14 s view is one, its 2 s view is not
	// (yet: it is of the last hour, so the count says it may come); at a
	// 15 s threshold neither is.
	patch := func(body string) {
		t.Helper()
		req, _ := http.NewRequest("PATCH", c.Base+"/v1/admin/sites/eng.example", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+apptest.AdminToken)
		if code, b := c.Do(req); code != http.StatusOK {
			t.Fatalf("PATCH %s: %d %s", body, code, b)
		}
	}
	patch(`{"count_mode":"engaged"}`)
	apptest.Eventually(t, 30*time.Second, func() string {
		if _, got, _ := c.Count("eng.example", "/a"); got.Views != 1 || got.Pending < 1 {
			return fmt.Sprintf("engaged count of /a: %d views, %d pending; want 1 and at least 1", got.Views, got.Pending)
		}
		return ""
	})
	patch(`{"engaged_after":15}`)
	apptest.Eventually(t, 30*time.Second, func() string {
		if _, got, _ := c.Count("eng.example", "/a"); got.Views != 0 {
			return fmt.Sprintf("engaged count of /a at 15 s: %d views, want 0", got.Views)
		}
		return ""
	})
	rep, err := apptest.Reconcile(t, m, clk.now().Add(-time.Hour), clk.now().Add(time.Hour))
	if err != nil || !rep.OK() {
		t.Errorf("reconcile: %+v, %v", rep, err)
	}
}

type engagementSummary struct {
	Views         uint64
	Visits        uint64
	EngagedViews  uint64   `json:"engaged_views"`
	Reported      uint64   `json:"reported_views"`
	BounceRate    *float64 `json:"bounce_rate"`
	VisitDuration *float64 `json:"visit_duration"`
}

func deref(x *float64) any {
	if x == nil {
		return nil
	}
	return *x
}

// TestSameDay: every start of a test, at any second of a day, keeps its
// next hour in one UTC day.
func TestSameDay(t *testing.T) {
	day := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	for s := 0; s < 24*3600; s += 7 {
		start := day.Add(time.Duration(s) * time.Second)
		from := start.Add(sameDay(start))
		if to := from.Add(time.Hour - time.Nanosecond); from.Truncate(24*time.Hour) != to.Truncate(24*time.Hour) {
			t.Fatalf("start %s: clock %s to %s crosses midnight", start, from, to)
		}
	}
}
