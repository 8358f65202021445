package api

import (
	"context"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

func TestInvalidReport(t *testing.T) {
	f := newFixture(t)
	_, token, err := f.sites.Add(context.Background(), "audit.example")
	if err != nil {
		t.Fatal(err)
	}
	day1 := time.Date(2026, 11, 27, 23, 59, 0, 0, time.UTC)
	day2 := day1.Add(2 * time.Minute) // the next UTC day
	var rows []viewcount.Verdict
	add := func(at time.Time, r viewcount.Reason, n int) {
		for i := 0; i < n; i++ {
			rows = append(rows, viewcount.Verdict{Event: viewcount.Event{Time: at, Site: "audit.example", Page: "/", UA: "x",
				Visitor: uint64(len(rows))}, Reason: r, Seq: uint64(len(rows))})
		}
	}
	add(day1, viewcount.Valid, 10)
	add(day1, viewcount.BotUA, 4)
	add(day1, viewcount.Datacenter, 1)
	n := len(rows)
	add(day2, viewcount.Datacenter, 3)
	for i := n; i < len(rows); i++ {
		rows[i].ASN = []uint32{16509, 16509, 24940}[i-n] // AWS twice, Hetzner
	}
	add(day2, viewcount.Valid, 5)
	add(day2, viewcount.Rate, 7)
	add(day2, viewcount.BotUA, 2)
	n = len(rows)
	add(day2, viewcount.ForeignOrigin, 3)
	for i := n; i < len(rows); i++ {
		rows[i].Origin = []string{"localhost", "fraud.test", "fraud.test"}[i-n]
	}
	add(day2.AddDate(0, 0, 5), viewcount.BotUA, 100) // outside the range asked for
	if err := storetest.InsertFed(context.Background(), f.store, "", rows); err != nil {
		t.Fatal(err)
	}
	get := func(auth, query string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("GET", "/v1/sites/audit.example/invalid"+query, nil)
		if auth != "" {
			r.Header.Set("Authorization", "Bearer "+auth)
		}
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		return w
	}
	w := get(token, "?from=2026-11-27&to=2026-11-28")
	if w.Code != 200 {
		t.Fatalf("report: %d %s", w.Code, w.Body)
	}
	golden(t, "invalid.json", w.Body.Bytes())
	// The report reads the rollups (dim_rollup, rejected_rollup), never
	// views_raw: without its rows it answers the same. Test-only SQL.
	if err := f.store.Exec(context.Background(), "TRUNCATE TABLE views_raw", nil); err != nil {
		t.Fatal(err)
	}
	if w := get(token, "?from=2026-11-27&to=2026-11-28"); w.Code != 200 {
		t.Fatalf("report without views_raw: %d %s", w.Code, w.Body)
	} else {
		golden(t, "invalid.json", w.Body.Bytes())
	}
	if w := get(testAdmin, "?from=2026-11-27&to=2026-11-28"); w.Code != 200 {
		t.Errorf("admin token: %d", w.Code)
	}
	check := func(auth, query string, code int, inBody string) {
		t.Helper()
		if w := get(auth, query); w.Code != code || !strings.Contains(w.Body.String(), inBody) {
			t.Errorf("%q: %d %s, want %d with %q", query, w.Code, w.Body, code, inBody)
		}
	}
	check("", "", 401, "token")
	check("vcs_wrong", "", 401, "token")
	check(token, "?from=yesterday", 400, "from")
	check(token, "?from=2026-11-28&to=2026-11-01", 400, "before")
	check(token, "?from=2020-01-01&to=2026-11-01", 400, "366")
	// Out of the store's range: a client error, not a 503 and an error in
	// the log (TestReportRange).
	check(token, "?to=9999-12-31", 400, "to: must be between")
	check(token, "?from=9999-01-01&to=9999-12-31", 400, "to: must be between")
	// The default range is the last 30 days before the fixture's clock
	// (2026-11-29 12:00): the six-days-later rows are in the future.
	check(token, "", 200, `"rejected":20`)
}

// TestReportRange: every from/to the report cannot serve is a worded client
// error, decided before the store is asked: far dates must not reach the
// store, which clamps them or fails.
func TestReportRange(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f := func(from, to string, wantErr string, wantFrom, wantTo string) {
		t.Helper()
		gotFrom, gotTo, err := reportRange(from, to, now)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("from %q to %q: %v (%s to %s), want an error with %q", from, to, err, gotFrom, gotTo, wantErr)
			}
			return
		}
		if err != nil || gotFrom.Format(time.RFC3339) != wantFrom || gotTo.Format(time.RFC3339) != wantTo {
			t.Errorf("from %q to %q: %s to %s (%v), want %s to %s", from, to, gotFrom, gotTo, err, wantFrom, wantTo)
		}
	}
	f("", "", "", "2026-10-31T00:00:00Z", "2026-11-30T00:00:00Z")
	f("2026-11-01", "2026-11-28", "", "2026-11-01T00:00:00Z", "2026-11-29T00:00:00Z")
	f("2026-11-30", "2026-11-30", "", "2026-11-30T00:00:00Z", "2026-12-01T00:00:00Z") // tomorrow: today east of UTC
	f("2026-11-30T00:00:00+14:00", "", "", "2026-11-29T10:00:00Z", "2026-11-30T00:00:00Z")
	f("2025-11-29", "2026-11-29", "", "2025-11-29T00:00:00Z", "2026-11-30T00:00:00Z") // 366 days
	f("2026-11-01", "2027-01-31", "", "2026-11-01T00:00:00Z", "2027-02-01T00:00:00Z")
	f("1970-01-01", "1970-01-01", "", "1970-01-01T00:00:00Z", "1970-01-02T00:00:00Z")
	// Times are widened to whole UTC hours, the rollups' grain.
	f("2026-11-28T10:20:00Z", "2026-11-28T11:05:30Z", "", "2026-11-28T10:00:00Z", "2026-11-28T12:00:00Z")
	f("2026-11-28T10:20:00Z", "2026-11-28T10:40:00Z", "", "2026-11-28T10:00:00Z", "2026-11-28T11:00:00Z")
	f("2026-11-28T10:00:00Z", "2026-11-28T11:00:00Z", "", "2026-11-28T10:00:00Z", "2026-11-28T11:00:00Z")
	f("2026-11-28T10:20:00+05:30", "2026-11-28T11:00:00.001Z", "", "2026-11-28T04:00:00Z", "2026-11-28T12:00:00Z")

	f("9999-01-01", "", "from: in the future", "", "")
	f("9999-01-01", "9999-01-02", "to: must be between 1970-01-01 and 2027-12-01", "", "")
	f("", "9999-12-31", "to: must be", "", "")
	f("2300-01-01", "2300-01-02", "to: must be", "", "")
	f("2030-01-01", "2030-01-02", "to: must be", "", "")
	f("2026-12-02", "2026-12-05", "from: in the future (at most 2026-11-30)", "", "")
	f("", "2027-06-01", "from (30 days before to by default) is in the future", "", "")
	f("1899-01-01", "1899-01-02", "to: must be", "", "")
	f("0001-01-01", "0001-01-02", "to: must be", "", "")
	f("", "0001-01-01", "to: must be", "", "")
	f("", "1970-01-05", "from: must not be before 1970-01-01", "", "")
	f("1969-12-31", "1970-01-05", "from: must not be before", "", "")
	f("2026-11-28", "2026-11-01", "before to", "", "")
	f("2026-11-28T10:00:00Z", "2026-11-28T10:00:00Z", "before to", "", "")
	f("2020-01-01", "2026-11-01", "at most 366 days", "", "")
	f("yesterday", "", "from: want", "", "")
	f("", "+12026-01-01", "to: want", "", "")
}

// TestBearerScheme: the auth scheme is case-insensitive and may be followed
// by several spaces (RFC 7235), for the admin token and site tokens alike:
// clients and proxies that write "bearer" or pad the header get in.
func TestBearerScheme(t *testing.T) {
	f := newFixture(t)
	_, token, err := f.sites.Add(context.Background(), "audit.example")
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, path, auth, body string) int {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		return w.Code
	}
	n := 0
	check := func(auth string, want int) {
		t.Helper()
		for _, tok := range []string{token, testAdmin} {
			if got := do("GET", "/v1/sites/audit.example/invalid", strings.ReplaceAll(auth, "T", tok), ""); got != want {
				t.Errorf("report with %q: %d, want %d", strings.ReplaceAll(auth, "T", "<token>"), got, want)
			}
		}
		n++
		wantAdd := want
		if want == 200 {
			wantAdd = 201
		}
		body := `{"domain":"s` + strconv.Itoa(n) + `.example"}`
		if got := do("POST", "/v1/admin/sites", strings.ReplaceAll(auth, "T", testAdmin), body); got != wantAdd {
			t.Errorf("admin with %q: %d, want %d", strings.ReplaceAll(auth, "T", "<token>"), got, wantAdd)
		}
	}
	check("Bearer T", 200)
	check("bearer T", 200)
	check("BEARER T", 200)
	check("bEaReR    T", 200)
	check("Bearer\tT", 200)
	check("BearerT", 401)
	check("Bearer", 401)
	check("Bearer    ", 401)
	check("Basic T", 401)
	check("Bearer T T", 401)
	check("Bearers T", 401)
}
