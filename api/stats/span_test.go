package stats

import (
	"github.com/viewcount/viewcount/sql/queries"
	"strings"
	"testing"
	"time"
)

func TestQueryFilesExist(t *testing.T) {
	for _, n := range queryNames {
		if q := queries.Text(n); !strings.Contains(q, "SELECT") {
			t.Errorf("%s: %q", n, q)
		}
	}
}

// A range is read as whole UTC days plus the hours at its edges.
func TestSpanParams(t *testing.T) {
	f := func(from, to, dfrom, dto string) {
		t.Helper()
		p := span{mustTime(t, from), mustTime(t, to)}.params("s")
		if p["dfrom"] != dfrom || p["dto"] != dto || p["from"] != mustTime(t, from).Format(time.DateTime) {
			t.Errorf("span %s–%s: days %s–%s, want %s–%s", from, to, p["dfrom"], p["dto"], dfrom, dto)
		}
	}
	// Berlin's 27 to 29 March 2026, the change to summer time inside.
	f("2026-03-26T23:00:00Z", "2026-03-29T22:00:00Z", "2026-03-27 00:00:00", "2026-03-29 00:00:00")
	// Whole UTC days only.
	f("2026-03-01T00:00:00Z", "2026-03-03T00:00:00Z", "2026-03-01 00:00:00", "2026-03-03 00:00:00")
	// No whole day inside: hours only (an empty day range at from).
	f("2026-03-01T10:00:00Z", "2026-03-02T09:00:00Z", "2026-03-01 10:00:00", "2026-03-01 10:00:00")
	f("2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z", "2026-03-01 10:00:00", "2026-03-01 10:00:00")
}

// A range reaching past now reads its last day from the day row.
func TestSpanLiveParams(t *testing.T) {
	now := mustTime(t, "2026-03-10T12:34:00Z")
	f := func(from, to, dfrom, dto, wantTo string) {
		t.Helper()
		p := hourSpan(mustTime(t, from), mustTime(t, to)).liveParams("s", now)
		if p["dfrom"] != dfrom || p["dto"] != dto || p["to"] != wantTo {
			t.Errorf("span %s–%s: days %s–%s to %s, want %s–%s to %s", from, to, p["dfrom"], p["dto"], p["to"], dfrom, dto, wantTo)
		}
	}
	// The last 30 days up to now: hours at the start, days to tomorrow.
	f("2026-02-08T12:34:00Z", "2026-03-10T12:34:00Z", "2026-02-09 00:00:00", "2026-03-11 00:00:00", "2026-03-11 00:00:00")
	// Ending before now: as params.
	f("2026-02-08T12:00:00Z", "2026-03-10T12:00:00Z", "2026-02-09 00:00:00", "2026-03-10 00:00:00", "2026-03-10 12:00:00")
	// Within today: its hours (the day row holds hours before from).
	f("2026-03-10T05:00:00Z", "2026-03-10T12:34:00Z", "2026-03-10 05:00:00", "2026-03-10 05:00:00", "2026-03-10 13:00:00")
	// The last 24 hours: yesterday's hours, today's day row.
	f("2026-03-09T12:34:00Z", "2026-03-10T12:34:00Z", "2026-03-10 00:00:00", "2026-03-11 00:00:00", "2026-03-11 00:00:00")
}

func TestBuckets(t *testing.T) {
	load := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	f := func(iv interval, from, to string, loc *time.Location, wantFirst, wantLast string, n int, spanFrom, spanTo string) {
		t.Helper()
		starts, s := buckets(iv, mustTime(t, from), mustTime(t, to), loc)
		if len(starts) != n || starts[0].In(loc).Format(time.RFC3339) != wantFirst || starts[n-1].In(loc).Format(time.RFC3339) != wantLast ||
			s.from != mustTime(t, spanFrom) || s.to != mustTime(t, spanTo) {
			t.Errorf("%s %s–%s: %d buckets %v…%v, span %v–%v", iv, from, to, len(starts), starts[0].In(loc), starts[len(starts)-1].In(loc), s.from, s.to)
		}
	}
	berlin := load("Europe/Berlin")
	f(day, "2026-03-27T00:00:00+01:00", "2026-03-30T00:00:00+02:00", berlin, "2026-03-27T00:00:00+01:00", "2026-03-29T00:00:00+01:00", 3,
		"2026-03-26T23:00:00Z", "2026-03-29T22:00:00Z")
	// A range inside a day widens to the day.
	f(day, "2026-03-29T12:00:00+02:00", "2026-03-29T13:00:00+02:00", berlin, "2026-03-29T00:00:00+01:00", "2026-03-29T00:00:00+01:00", 1,
		"2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z")
	f(hour, "2026-03-01T10:30:00Z", "2026-03-01T12:10:00Z", time.UTC, "2026-03-01T10:00:00Z", "2026-03-01T12:00:00Z", 3,
		"2026-03-01T10:00:00Z", "2026-03-01T13:00:00Z")
	f(minute, "2026-03-01T10:30:30Z", "2026-03-01T10:33:00Z", time.UTC, "2026-03-01T10:30:00Z", "2026-03-01T10:32:00Z", 3,
		"2026-03-01T10:30:00Z", "2026-03-01T10:33:00Z")
	// Half-hour zones: local days, read from the UTC hours around them.
	kolkata := load("Asia/Kolkata")
	f(day, "2026-03-01T00:00:00+05:30", "2026-03-03T00:00:00+05:30", kolkata, "2026-03-01T00:00:00+05:30", "2026-03-02T00:00:00+05:30", 2,
		"2026-02-28T18:00:00Z", "2026-03-02T19:00:00Z")
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v.UTC()
}
