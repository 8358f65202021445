package stats_test

import (
	"time"
)

func testRealtime(f *fixture) {
	t := f.t
	var got struct {
		From, To     string
		Views5m      uint64  `json:"views_5m"`
		VisitorsNow  uint64  `json:"visitors_now"`
		LagSeconds   float64 `json:"lag_seconds"`
		UniquesError float64 `json:"uniques_error"`
	}
	f.getJSON("/v1/sites/utc.example/stats/realtime", &got)
	// now is 10:31:30: the minutes from 10:27 on.
	views, uniques, _ := f.rawCounts("utc.example", "", time.Date(2026, 4, 2, 10, 27, 0, 0, time.UTC), f.now)
	if got.Views5m != views || got.VisitorsNow != uniques || views == 0 || got.LagSeconds != 1.5 || got.From != "2026-04-02T10:27:00Z" {
		t.Errorf("realtime %+v, want %d views %d visitors lag 1.5", got, views, uniques)
	}
	// The lag is the site's own.
	f.getJSON("/v1/sites/berlin.example/stats/realtime", &got)
	if got.LagSeconds != 0 {
		t.Errorf("berlin.example: lag %v, want its own 0", got.LagSeconds)
	}
}
