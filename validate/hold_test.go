package validate

import (
	"testing"
	"time"

	"github.com/viewcount/viewcount"
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
