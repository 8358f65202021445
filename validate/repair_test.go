package validate

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/progress"
	"github.com/viewcount/viewcount/rollup"
)

var repairSink = rollup.Config{MaxRows: 64, InsertRetries: 1}

// validateAll runs a validator until views_raw has n rows, then stops it.
func (p *pipeline) validateAll(t *testing.T, n int) {
	t.Helper()
	_, stop := p.run(t, Options{Raw: p.store, MaxLag: time.Hour}, repairSink)
	p.waitRows(t, n)
	time.Sleep(100 * time.Millisecond) // a duplicate insert would show up by now
	stop()
}

// refuses runs a validator and waits until every partition in parts shows
// failing health naming cmd; their rows in views_raw must not change
// meanwhile. The other partitions may go on: one whose record is within
// the stream validates what follows it (which partitions a lost tail
// leaves behind depends on where each one's last batch ended).
func (p *pipeline) refuses(t *testing.T, cmd string, parts ...int) {
	t.Helper()
	before := p.partitionRows(t, parts)
	metrics, stop := p.run(t, Options{Raw: p.store, MaxLag: time.Hour}, repairSink)
	waitFor(t, "partitions refusing with "+cmd, 30*time.Second, func() bool {
		f := metrics.Failing()
		for _, q := range parts {
			if !strings.Contains(f[partName(q)], cmd) || !strings.Contains(f[partName(q)], "progress record inconsistent") {
				return false
			}
		}
		return true
	})
	t.Logf("failing: %v", metrics.Failing())
	stop()
	if after := p.partitionRows(t, parts); after != before {
		t.Fatalf("views_raw of partitions %v went from %d to %d rows while they refused", parts, before, after)
	}
}

// partitionRows counts the rows of views_raw in parts.
func (p *pipeline) partitionRows(t *testing.T, parts []int) int {
	t.Helper()
	n := 0
	for _, r := range p.verdicts(t) {
		f := strings.Fields(r)
		for _, q := range parts {
			if f[0] == strconv.Itoa(q) {
				n++
			}
		}
	}
	return n
}

// exactlyOnce checks views_raw holds each event of evs as often as evs
// does (retries repeat an id), and no stream position twice.
func (p *pipeline) exactlyOnce(t *testing.T, evs []viewcount.Event) {
	t.Helper()
	want := map[string]int{}
	for _, e := range evs {
		want[e.ID]++
	}
	got := map[string]int{}
	pos := map[string]bool{}
	rows := p.verdicts(t)
	for _, r := range rows {
		f := strings.Fields(r)
		got[f[3]]++
		if k := strings.Join(f[:3], "/"); pos[k] {
			t.Errorf("stream position %s is in views_raw twice", k)
		} else {
			pos[k] = true
		}
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("event %s is in views_raw %d times, want %d", id, got[id], n)
		}
	}
	if len(rows) != len(evs) {
		t.Errorf("views_raw has %d rows, want %d", len(rows), len(evs))
	}
}

// TestRepairProgress: a progress record older than
// views_raw (a damaged KV tail) made a resume insert rows twice; a missing
// record would redo the whole stream. Both now stop their partition with
// the repair named, and `repair progress` makes them resume right after
// what views_raw holds.
func TestRepairProgress(t *testing.T) {
	evs := testTraffic(800)
	p := newPipeline(t, evs[:600])
	ctx := context.Background()
	p.validateAll(t, 600)

	intents, err := p.conn.JS.KeyValue(ctx, viewcount.BucketRollup)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := intents.Put(ctx, progress.Key(0), []byte(`{"first":1,"last":3}`)); err != nil {
		t.Fatal(err)
	}
	if err := intents.Delete(ctx, progress.Key(1)); err != nil {
		t.Fatal(err)
	}
	problems, err := CheckProgress(ctx, p.conn.JS, p.store, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 || problems[0].Partition != 0 || problems[1].Partition != 1 || problems[0].Repair != CmdRepairProgress {
		t.Fatalf("problems %v, want partitions 0 and 1 needing %s", problems, CmdRepairProgress)
	}
	p.refuses(t, CmdRepairProgress, 0, 1)

	changes, err := RepairProgress(ctx, p.conn.JS, p.store, []int{0, 1, 2}, true)
	if err != nil || len(changes) != 2 {
		t.Fatalf("dry run: %v, %v", changes, err)
	}
	if problems, _ := CheckProgress(ctx, p.conn.JS, p.store, []int{0, 1, 2}); len(problems) != 2 {
		t.Fatalf("the dry run changed something: problems now %v", problems)
	}
	if changes, err = RepairProgress(ctx, p.conn.JS, p.store, []int{0, 1, 2}, false); err != nil || len(changes) != 2 {
		t.Fatalf("repair: %v, %v", changes, err)
	}
	t.Logf("changes: %v", changes)
	if problems, err := CheckProgress(ctx, p.conn.JS, p.store, []int{0, 1, 2}); err != nil || len(problems) != 0 {
		t.Fatalf("after the repair: %v, %v", problems, err)
	}

	publish(t, p.conn, evs[600:])
	p.validateAll(t, len(evs))
	p.exactlyOnce(t, evs)
}

// TestRepairStream: the stream lost its tail (a
// damaged last block) and new hits were acknowledged into reused
// sequences, which the partitions skipped as already done. Serving
// refuses, the partitions refuse, and `repair stream` publishes the
// uncounted survivors again past every used sequence and resets the
// records: every event ends in views_raw exactly once.
// loseStreamTail keeps the first two thirds of p's stream and loses the
// rest, as a damaged last block does, then publishes fresh: acknowledged
// into sequences already used.
func loseStreamTail(t *testing.T, p *pipeline, fresh []viewcount.Event) {
	t.Helper()
	ctx := context.Background()
	// Keep the first two thirds of the stream, lose the rest.
	s, err := p.conn.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := info.State.LastSeq
	var kept []*nats.Msg
	for seq := uint64(1); seq <= last*2/3; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data})
	}
	if err := p.conn.JS.DeleteStream(ctx, viewcount.StreamName); err != nil {
		t.Fatal(err)
	}
	if _, err := p.conn.JS.CreateStream(ctx, info.Config); err != nil {
		t.Fatal(err)
	}
	for _, m := range kept {
		if _, err := p.conn.JS.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	publish(t, p.conn, fresh)

}

func TestRepairStream(t *testing.T) {
	evs := testTraffic(800)
	p := newPipeline(t, evs[:600])
	ctx := context.Background()
	p.validateAll(t, 600)

	loseStreamTail(t, p, evs[600:])

	if err := CheckStreamTail(ctx, p.conn.JS, p.store, testPartitions); err == nil || !strings.Contains(err.Error(), CmdRepairStream) {
		t.Fatalf("CheckStreamTail = %v, want an error naming %s", err, CmdRepairStream)
	}
	var behind []int
	problems, err := CheckProgress(ctx, p.conn.JS, p.store, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range problems {
		if pr.Repair == CmdRepairStream {
			behind = append(behind, pr.Partition)
		}
	}
	if len(behind) == 0 {
		t.Fatalf("no partition found beyond the stream: %v", problems)
	}
	p.refuses(t, CmdRepairStream, behind...)

	save := filepath.Join(t.TempDir(), "repair-stream.jsonl")
	dry, err := RepairStream(ctx, p.conn.JS, p.store, testPartitions, save, true)
	if err != nil || dry.NothingToDo || dry.Events < 200 {
		t.Fatalf("dry run: %+v, %v (want at least the 200 new events)", dry, err)
	}
	r, err := RepairStream(ctx, p.conn.JS, p.store, testPartitions, save, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair: %+v", r)
	if r.Events != dry.Events {
		t.Errorf("the repair published %d events, the dry run said %d", r.Events, dry.Events)
	}
	if err := CheckStreamTail(ctx, p.conn.JS, p.store, testPartitions); err != nil {
		t.Fatal(err)
	}
	if problems, err := CheckProgress(ctx, p.conn.JS, p.store, []int{0, 1, 2}); err != nil || len(problems) != 0 {
		t.Fatalf("after the repair: %v, %v", problems, err)
	}
	if again, err := RepairStream(ctx, p.conn.JS, p.store, testPartitions, save, true); err != nil || !again.NothingToDo {
		t.Fatalf("a second repair: %+v, %v, want nothing to do", again, err)
	}
	p.validateAll(t, len(evs))
	p.exactlyOnce(t, evs)
}

// TestRepairStreamCutShort: a repair cut short after its purge, with half of
// the saved messages published again, is finished by the next run; every
// event ends up counted once (the repeats as duplicate_id).
func TestRepairStreamCutShort(t *testing.T) {
	evs := testTraffic(800)
	p := newPipeline(t, evs[:600])
	ctx := context.Background()
	p.validateAll(t, 600)
	loseStreamTail(t, p, evs[600:])

	save := filepath.Join(t.TempDir(), "repair-stream.jsonl")
	dry, err := RepairStream(ctx, p.conn.JS, p.store, testPartitions, save, true)
	if err != nil || dry.NothingToDo {
		t.Fatalf("dry run: %+v, %v", dry, err)
	}
	// What the repair does up to the cut: save, purge, publish half.
	s, err := p.conn.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	var keep []savedMsg
	for part := range testPartitions {
		if keep, err = uncounted(ctx, s, p.store, part, dry.StreamLast, keep); err != nil {
			t.Fatal(err)
		}
	}
	if err := saveMsgs(save, keep); err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSequence(dry.Used+1)); err != nil {
		t.Fatal(err)
	}
	for _, m := range keep[:len(keep)/2] {
		if _, err := p.conn.JS.Publish(ctx, m.Subject, m.Data); err != nil {
			t.Fatal(err)
		}
	}

	r, err := RepairStream(ctx, p.conn.JS, p.store, testPartitions, save, false)
	if err != nil || !r.Resumed || r.Messages != len(keep) {
		t.Fatalf("finishing the cut repair: %+v, %v (want %d messages resumed)", r, err, len(keep))
	}
	if _, err := os.Stat(save); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("save file after the repair: %v", err)
	}
	repeats, saved := 0, map[string]bool{}
	for i, m := range keep {
		n, _ := viewcount.DecodeEvents(nil, m.Data)
		for _, e := range n {
			saved[e.ID] = true
		}
		if i < len(keep)/2 {
			repeats += len(n)
		}
	}
	p.validateAll(t, len(evs)+repeats)
	// Every event is in views_raw (none lost), and none of the saved ones
	// counted twice: the repeats of a message published before the cut are
	// duplicate_id, or whatever earlier rule rejects the event anyway. (A
	// retry of an event counted before the damage can count again: the
	// purge took the history the windows are rebuilt from; docs/operations.md, Recovery.)
	rows, valid := map[string]int{}, map[string]int{}
	for _, row := range p.verdicts(t) {
		f := strings.Fields(row)
		rows[f[3]]++
		if f[4] == string(viewcount.Valid) {
			valid[f[3]]++
		}
	}
	before := map[string]bool{} // ids counted before the damage, whose retries the purge forgets
	for _, e := range evs[:600] {
		before[e.ID] = true
	}
	counted := 0
	for _, e := range evs {
		if rows[e.ID] == 0 {
			t.Errorf("event %s is not in views_raw", e.ID)
		}
		if saved[e.ID] && !before[e.ID] && valid[e.ID] > 1 {
			t.Errorf("event %s is counted %d times", e.ID, valid[e.ID])
		}
	}
	for range valid {
		counted++
	}
	if counted == 0 {
		t.Fatal("no valid views at all: the traffic proves nothing")
	}
}
