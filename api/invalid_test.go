package api

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

func TestInvalidReport(t *testing.T) {
	f := newFixture(t, nil)
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
	add(day2, viewcount.Valid, 5)
	add(day2, viewcount.Rate, 7)
	add(day2, viewcount.BotUA, 2)
	add(day2.AddDate(0, 0, 5), viewcount.BotUA, 100) // outside the range asked for
	if err := f.store.InsertViews(context.Background(), "", rows); err != nil {
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
	// The default range is the last 30 days before the fixture's clock
	// (2026-11-29 12:00): the six-days-later rows are in the future.
	check(token, "", 200, `"rejected":14`)
}
