package app

import (
	"testing"

	"github.com/viewcount/viewcount/rollup/repair"
)

// check prints an engagement_rollup difference as its key and the figures
// that differ, stored and recounted.
func TestDescribeEngagementDifference(t *testing.T) {
	stored := repair.EngagementFigures{Engagements: 3, EngagedMS: 51_000, EngagedHist: "{6:1,17:1}", ScrollHist: "{8:1}", Visits: 1}
	recount := stored
	recount.EngagedMS, recount.EngagedHist = 52_000, "{6:1,18:1}"
	got := describeDifference(repair.Difference{Table: "engagement_rollup", Grain: "hour", Site: "a.example", Dim: "source",
		Value: "Google", Bucket: "2026-03-10 09:00:00", StoredFigures: &stored, RecountFigures: &recount})
	want := `hour a.example source "Google" 2026-03-10 09:00:00: engaged_ms 51000 (recount 52000), engaged_hist {6:1,17:1} (recount {6:1,18:1})`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
