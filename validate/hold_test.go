package validate

import (
	"strconv"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/validate/judge"
)

func TestHoldQueueRelease(t *testing.T) {
	q := holdQueue{window: 1000, max: 100}
	t0 := time.UnixMilli(10_000)
	for i := 0; i < 3; i++ {
		q.push(viewcount.Verdict{Event: viewcount.Event{Time: t0.Add(time.Duration(i) * time.Second)}, Index: uint32(i)})
	}
	q.observe(11_000)
	out := q.release(nil, func(*viewcount.Verdict) {})
	if len(out) != 1 || out[0].Index != 0 || q.held() != 2 {
		t.Fatalf("released %v, kept %d", out, q.held())
	}
	if !q.due(time.UnixMilli(13_000)) || q.due(time.UnixMilli(11_500)) {
		t.Fatal("due is wrong")
	}
	q.observe(20_000)
	out = q.release(out[:0], func(v *viewcount.Verdict) { v.Reason = viewcount.Rate })
	if len(out) != 2 || out[0].Index != 1 || out[1].Reason != viewcount.Rate || q.held() != 0 {
		t.Fatalf("second release %v", out)
	}
}

func TestHoldQueueBounded(t *testing.T) {
	const maxHeld = 1000
	q := holdQueue{window: 60_000, max: maxHeld}
	var out []viewcount.Verdict
	for i := 0; i < maxHeld+10; i++ {
		q.push(viewcount.Verdict{Event: viewcount.Event{Time: time.UnixMilli(int64(i))}, Index: uint32(i)})
		out = q.release(out, func(*viewcount.Verdict) {})
	}
	if q.held() != maxHeld || len(out) != 10 || out[0].Index != 0 || out[9].Index != 9 {
		t.Fatalf("held %d, released %d early (first %d)", q.held(), len(out), out[0].Index)
	}
}

// TestHeldViewHoldsItsReports: a report for a view held for settling waits
// behind it and is judged once the view's verdict is final: accepted for a
// view that settles valid, an orphan for one that settles as a flood. A
// held report is never a pending view.
func TestHeldViewHoldsItsReports(t *testing.T) {
	const ua = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, flood := range []bool{false, true} {
		rules, err := judge.NewRules(judge.Config{}, sitesOf{"example.com": true})
		if err != nil {
			t.Fatal(err)
		}
		q := holdQueue{window: rules.SettleWindow().Milliseconds(), max: 1000}
		view := func(i int) viewcount.Event {
			return viewcount.Event{Time: t0.Add(time.Duration(i) * 2 * time.Second), Site: "example.com", Page: "/p" + strconv.Itoa(i),
				UA: ua, Visitor: 42, Network: 7, ID: "v" + strconv.Itoa(i), Source: viewcount.SourcePixel}
		}
		var out []viewcount.Verdict
		n := 8 // watched from the fifth view of the minute on
		if flood {
			n = 40 // over the 30 a minute
		}
		for i := range n {
			out = judgeEvents(rules, &q, "v", 0, uint64(i+1), []viewcount.Event{view(i)}, false, nil, out)
		}
		held := view(6)
		rep := held
		rep.Time, rep.Kind, rep.Source = held.Time.Add(5*time.Second), viewcount.KindEngagement, viewcount.SourceBeacon
		rep.Engagement = viewcount.Engagement{EngagedMS: 4000, Scroll: 30, AgeMS: 5000}
		if !q.holds(&rep) {
			t.Fatalf("flood %v: view 6 is not held", flood)
		}
		out = judgeEvents(rules, &q, "v", 0, 100, []viewcount.Event{rep}, false, nil, out)
		for _, v := range out {
			if v.Kind == viewcount.KindEngagement {
				t.Fatalf("flood %v: the report was judged before its view: %s", flood, v.Reason)
			}
		}
		if pending := q.bySite()[viewcount.PendingKey{Site: "example.com"}]; pending != uint64(q.held()-1) {
			t.Errorf("flood %v: %d pending views with %d held verdicts, one a report", flood, pending, q.held())
		}
		// A tick past the settle window releases everything.
		q.observe(t0.Add(10 * time.Minute).UnixMilli())
		out = judgeEvents(rules, &q, "v", 0, 101, nil, false, nil, out)
		var viewReason, repReason viewcount.Reason
		for _, v := range out {
			switch {
			case v.Kind == viewcount.KindEngagement:
				repReason = v.Reason
			case v.ID == held.ID:
				viewReason = v.Reason
			}
		}
		want := viewcount.Valid
		if flood {
			want = viewcount.EngagementOrphan
		}
		if repReason != want || (viewReason == viewcount.Valid) == flood {
			t.Errorf("flood %v: view settled %s, its report %s; want the report %s", flood, viewReason, repReason, want)
		}
		if q.held() != 0 || len(q.views) != 0 {
			t.Errorf("flood %v: %d still held, %d held view keys", flood, q.held(), len(q.views))
		}
	}
}
