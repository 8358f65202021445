package validate

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/internal/progress"
)

func TestPartitionStateCheck(t *testing.T) {
	f := func(s PartitionState, want string) {
		t.Helper()
		p := s.Check()
		switch {
		case want == "" && p != nil:
			t.Errorf("%+v: %v, want no problem", s, p)
		case want != "" && p == nil:
			t.Errorf("%+v: no problem, want %s", s, want)
		case want != "" && (p.Repair != want || !strings.Contains(p.String(), want) || !errors.Is(p.Err, ErrCorruptProgress)):
			t.Errorf("%+v: %v (repair %q), want %s", s, p, p.Repair, want)
		}
	}
	rec := func(first, last uint64) progress.Record { return progress.Record{First: first, Last: last} }
	f(PartitionState{StreamLast: 0}, "")                                                    // new
	f(PartitionState{StreamLast: 50}, "")                                                   // nothing validated yet
	f(PartitionState{StreamLast: 50, HasRecord: true, Record: rec(10, 20), RawMax: 9}, "")  // batch 10-20 open
	f(PartitionState{StreamLast: 50, HasRecord: true, Record: rec(10, 20), RawMax: 20}, "") // batch 10-20 in
	f(PartitionState{StreamLast: 20, HasRecord: true, Record: rec(21, 20), RawMax: 20}, "") // as repaired
	f(PartitionState{StreamLast: 50, HasRecord: true, Record: rec(10, 20), RawMax: 21}, CmdRepairProgress)
	f(PartitionState{StreamLast: 50, RawMax: 1}, CmdRepairProgress)
	f(PartitionState{StreamLast: 15, HasRecord: true, Record: rec(10, 20), RawMax: 9}, CmdRepairStream)
	f(PartitionState{StreamLast: 15, HasRecord: true, Record: rec(10, 20), RawMax: 30}, CmdRepairStream)
	f(PartitionState{StreamLast: 15, RawMax: 16}, CmdRepairStream)
}

func TestPartProgressHealth(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bound := time.Minute
	f := func(name string, pp *partProgress, at time.Duration, want string) {
		t.Helper()
		_, _, err := pp.health(t0.Add(at), bound)
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v, want healthy", name, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: %v, want %q", name, err, want)
		}
	}
	f("never ran", &partProgress{}, time.Hour, "")
	idle := &partProgress{}
	idle.caughtUp(t0, time.Time{})
	f("caught up long ago", idle, time.Hour, "")
	busy := &partProgress{}
	busy.advanced(t0, true, time.Time{}, false, false)
	f("busy, recent progress", busy, 30*time.Second, "")
	f("busy, stalled", busy, 2*time.Minute, "no progress for 2m0s")
	stopped := &partProgress{}
	stopped.stopped(errors.New("insert failed"))
	f("stopped", stopped, 0, "insert failed")
	stopped.advanced(t0, true, t0, false, true)
	f("replaying after a stop", stopped, time.Second, "insert failed")
	stopped.advanced(t0, false, time.Time{}, true, false)
	f("inserted after a stop", stopped, time.Second, "")
	stopped.stopped(ErrLeaseLost)
	stopped.handedOver()
	f("handed over", stopped, time.Hour, "")
}
