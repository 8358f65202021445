package validate

import (
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// TestHeldBySite: what a partition holds for settling is counted by page
// and site, for the public counts' pending.
func TestHeldBySite(t *testing.T) {
	q := holdQueue{window: 1000, max: 10}
	if q.bySite() != nil {
		t.Fatal("empty queue counted something")
	}
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for i, page := range []string{"/a", "/a", "/b"} {
		q.push(viewcount.Verdict{Event: viewcount.Event{Site: "s.example", Page: page, Time: t0.Add(time.Duration(i) * time.Millisecond)}})
	}
	got := q.bySite()
	if len(got) != 3 || got[viewcount.PendingKey{Site: "s.example", Page: "/a"}] != 2 || got[viewcount.PendingKey{Site: "s.example"}] != 3 {
		t.Errorf("held by site: %v", got)
	}
	q.observe(t0.Add(2 * time.Second).UnixMilli())
	q.release(nil, func(*viewcount.Verdict) {})
	if q.bySite() != nil {
		t.Errorf("after release: %v", q.bySite())
	}
}
