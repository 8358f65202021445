package api

import (
	"context"
	"testing"

	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/latency/latencytest"
)

// TestRequestLatencyByRoute drives real requests through the api's router
// on a real store: each is timed under its route's template and status
// class, one series per route and class however many sites and pages the
// paths name, and the requests no route matched share one.
func TestRequestLatencyByRoute(t *testing.T) {
	f := newFixture(t)
	for _, site := range []string{"a.example", "b.example"} {
		if _, _, err := f.sites.Add(context.Background(), site); err != nil {
			t.Fatal(err)
		}
		f.views(t, site, "/post", 3)
	}
	count := "/v1/sites/:site/count"
	before := latencytest.Read(t, f.metrics)
	for _, r := range []struct {
		path string
		code int
	}{
		{"/v1/sites/a.example/count?page=/post", 200},
		{"/v1/sites/b.example/count?page=/post", 200},
		{"/v1/sites/a.example/count?page=/other", 200},
		{"/v1/sites/bad..site/count?page=/", 400},
		{"/v1/admin/sites", 401},
		{"/v1/no/such/route", 404},
	} {
		if w := f.get(t, r.path); w.Code != r.code {
			t.Fatalf("GET %s: %d %s, want %d", r.path, w.Code, w.Body, r.code)
		}
	}
	after := latencytest.Read(t, f.metrics)
	moved := func(route, class string, want uint64) {
		t.Helper()
		b := before.Count(t, latency.RequestName, "route", route, "status", class)
		a := after.Count(t, latency.RequestName, "route", route, "status", class)
		if a-b != want {
			t.Errorf("route %q status %s: %d more requests, want %d", route, class, a-b, want)
		}
	}
	moved(count, "2xx", 3)
	moved(count, "4xx", 1)
	moved("/v1/admin/sites", "4xx", 1)
	moved(latency.Unmatched, "4xx", 1)
	for _, s := range after.Series(latency.RequestName) {
		if s != "route="+count+",status=2xx" && s != "route="+count+",status=4xx" &&
			s != "route=/v1/admin/sites,status=4xx" && s != "route="+latency.Unmatched+",status=4xx" {
			t.Errorf("unexpected series %s", s)
		}
	}
	// Timed from routing to the handler's return: a store read of a
	// page not yet in the snapshot takes some time, never none.
	if h := after.Histogram(t, latency.RequestName, "route", count, "status", "2xx"); h.GetSampleSum() <= 0 {
		t.Errorf("sum %g s for three count reads", h.GetSampleSum())
	}
}
