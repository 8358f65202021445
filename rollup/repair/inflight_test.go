package repair_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// TestRecountWaitsForFeedInFlight: a recount that meets a feed recorded and
// not yet run (what reconcile meets while a validator is between recording
// a feed and copying it) waits for it instead of reporting its rows as
// missing from every rollup, and then finds no drift. Without the wait the
// recount answers at once, counting the recorded range as fed.
func TestRecountWaitsForFeedInFlight(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	at := time.Now().UTC().Add(-3 * time.Hour)
	insertViews(t, s, "fed", "inflight.example", at, 20)
	before, err := feed.Progress(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]viewcount.Verdict, 30)
	for i := range rows {
		rows[i] = viewcount.Verdict{Event: viewcount.Event{
			Time: at.Add(time.Duration(i) * 3 * time.Minute).Truncate(time.Millisecond),
			Site: "inflight.example", Page: fmt.Sprintf("/q%d", i%4), ID: fmt.Sprintf("inflight-%d", i), Visitor: uint64(100 + i),
		}, Reason: viewcount.Valid, Seq: uint64(1000 + i)}
	}
	if err := storetest.NumberBatch(ctx, s, rows); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertViews(ctx, "inflight", rows); err != nil {
		t.Fatal(err)
	}
	r := feed.Range{Partition: 0, First: before[0].Last + 1, Last: rows[0].Batch}
	if err := feed.Record(ctx, s, r); err != nil {
		t.Fatal(err)
	}

	// The recount's progress lines: the first says it waits.
	notes := make(chan string, 4)
	note := func(line string) { notes <- line }
	type answer struct {
		res []repair.RecountResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := repair.RecountRange(ctx, s, time.Now(), 5, time.Unix(0, 0), time.Now().Add(time.Hour), note)
		got <- answer{res, err}
	}()
	select {
	case a := <-got:
		t.Fatalf("the recount answered without waiting for the recorded feed %+v: %v, %d rows differing", r, a.err, differing(a.res))
	case line := <-notes:
		if want := fmt.Sprintf("waiting for the rollup feed in flight (partition 0, batches %d-%d) …", r.First, r.Last); line != want {
			t.Errorf("progress line %q, want %q", line, want)
		}
	}
	if err := feed.Copy(ctx, s, r); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil {
		t.Fatal(a.err)
	}
	if differing(a.res) != 0 {
		t.Errorf("drift after the feed ran: %+v", a.res)
	}

	// A feed that never finishes (its validator crashed) is waited for no
	// longer than the recount's context allows.
	rows2 := append([]viewcount.Verdict(nil), rows...)
	for i := range rows2 {
		rows2[i].ID += "-again"
		rows2[i].Batch = 0
	}
	if err := storetest.NumberBatch(ctx, s, rows2); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertViews(ctx, "inflight-again", rows2); err != nil {
		t.Fatal(err)
	}
	if err := feed.Record(ctx, s, feed.Range{Partition: 0, First: r.Last + 1, Last: rows2[0].Batch}); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithCancel(ctx)
	if res, err := repair.RecountRange(short, s, time.Now(), 5, time.Unix(0, 0), time.Now().Add(time.Hour),
		func(string) { cancel() }); err == nil {
		t.Errorf("a recount whose context ended while it waited answered %+v", res)
	}

	// Without a context that ends, the recount goes on once the feed made no
	// progress for the stall time, and reports the rows the feed holds as
	// missing: they are, until a validator redoes it.
	defer repair.SetFeedStall(0)()
	var lines []string
	res, err := repair.RecountRange(ctx, s, time.Now(), 5, time.Unix(0, 0), time.Now().Add(time.Hour),
		func(line string) { lines = append(lines, line) })
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !strings.Contains(lines[1], "made no progress") {
		t.Errorf("progress lines past a stalled feed: %q", lines)
	}
	if differing(res) == 0 {
		t.Errorf("a recount past a stalled feed found no drift: %+v", res)
	}
}

// feedDuringRead is the store with a feed landing during the first
// recount read after it is armed: a validator's feed completing while
// reconcile reads, after it found every feed done.
type feedDuringRead struct {
	store.Store
	feed func() // run once, before the first read that takes the feeds' reach
}

func (f *feedDuringRead) Query(ctx context.Context, q string, p store.Params) (*store.Result, error) {
	if run := f.feed; run != nil && p["fed"] != "" {
		f.feed = nil
		run()
	}
	return f.Store.Query(ctx, q, p)
}

// TestRecountAgainAfterFeedDuringRead: a feed that lands while the recount
// reads puts rows into the rollups that the recount, bounded by the reach
// it read before, does not count. That is not drift: the recount is done
// again against the new reach and finds none.
func TestRecountAgainAfterFeedDuringRead(t *testing.T) {
	s := migrated(t)
	ctx := t.Context()
	at := time.Now().UTC().Add(-3 * time.Hour)
	insertViews(t, s, "fed", "during.example", at, 20)
	q := &feedDuringRead{Store: s, feed: func() {
		insertViews(t, s, "during", "during.example", at.Add(time.Minute), 15) // inserted and fed
	}}
	res, err := repair.Recount(ctx, q, time.Now(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if q.feed != nil {
		t.Fatal("no recount read took the feeds' reach")
	}
	if differing(res) != 0 {
		t.Errorf("drift from a feed that landed during the read: %+v", res)
	}
}
