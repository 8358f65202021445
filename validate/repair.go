package validate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/progress"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// The repairs below change progress records and the stream under the
// partitions: nothing may validate while they run (on the embedded
// defaults the data-dir lock sees to that).

// ProgressChange is one record RepairProgress set, or would set.
type ProgressChange struct {
	Partition   int
	Old         progress.Record
	HadRecord   bool
	ResumeAfter uint64 // the new record resumes after this stream sequence
}

func (c ProgressChange) String() string {
	old := "no record"
	if c.HadRecord {
		old = fmt.Sprintf("record batch %d-%d", c.Old.First, c.Old.Last)
	}
	return fmt.Sprintf("partition %d: %s -> resume after seq %d (views_raw's highest, and the ticks after it)", c.Partition, old, c.ResumeAfter)
}

// RepairProgress sets the record of each of partitions that is behind
// views_raw (or missing while views_raw has its rows) so the partition
// resumes right after what views_raw holds of it: after its highest
// sequence there and the ticks that follow it. Ticks carry no rows of their
// own but release held views, which are stored under their own, earlier
// sequence; redoing a tick whose batch was inserted would store those views
// twice. (A tick whose batch never reached the store is skipped too: the
// views it released, at most those held when the damage happened, are not
// redone.) A partition whose stream lost its tail is left to RepairStream.
// dryRun changes nothing.
func RepairProgress(ctx context.Context, js jetstream.JetStream, st RawStore, partitions []int, dryRun bool) ([]ProgressChange, error) {
	states, err := ReadStates(ctx, js, st, partitions)
	if err != nil {
		return nil, err
	}
	intents, err := js.KeyValue(ctx, viewcount.BucketRollup)
	if err != nil {
		return nil, fmt.Errorf("validate: repair progress: %w", err)
	}
	stream, err := js.Stream(ctx, viewcount.StreamName)
	if err != nil {
		return nil, fmt.Errorf("validate: repair progress: %w", err)
	}
	var out []ProgressChange
	for _, s := range states {
		if pr := s.Check(); pr == nil || pr.Repair != CmdRepairProgress {
			continue
		}
		after, err := pastTicks(ctx, stream, s.Partition, s.RawMax)
		if err != nil {
			return out, err
		}
		if !dryRun {
			if err := progress.Write(ctx, intents, s.Partition, after); err != nil {
				return out, err
			}
		}
		out = append(out, ProgressChange{Partition: s.Partition, Old: s.Record, HadRecord: s.HasRecord, ResumeAfter: after})
	}
	return out, nil
}

// pastTicks returns the sequence of the last tick in the run of ticks that
// follows seq after in partition p, or after when an event (or nothing)
// follows it.
func pastTicks(ctx context.Context, s jetstream.Stream, p int, after uint64) (uint64, error) {
	for {
		m, err := s.GetMsg(ctx, after+1, jetstream.WithGetMsgSubject(viewcount.Subject(p)))
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return after, nil
		case err != nil:
			return 0, fmt.Errorf("validate: repair progress: partition %d: read seq %d on: %w", p, after+1, err)
		case m.Header.Get(TickHeader) == "":
			return after, nil
		}
		after = m.Sequence
	}
}

// StreamRepair is what RepairStream did, or would do.
type StreamRepair struct {
	StreamLast  uint64 // the stream's last sequence before the repair
	Used        uint64 // the highest sequence a record or views_raw names
	Messages    int    // surviving messages with events views_raw lacks, published again
	Events      int    // the events in them
	Partitions  int    // records reset to resume after Used
	NothingToDo bool
	Resumed     bool // a repair cut short after its purge was finished: Messages were its saved ones
}

// savedMsg is a message kept aside while the stream is purged.
type savedMsg struct {
	Subject string `json:"subject"`
	Data    []byte `json:"data"`
}

// RepairStream moves the stream's next sequence past every sequence a
// progress record or views_raw already names, so new events never reuse a
// counted or skipped one. The messages still in the stream whose events
// views_raw lacks (compared by partition, seq, index, event id and time,
// since sequences may have been reused) are first written to saveTo, then
// published again after the purge, so nothing acknowledged is lost; then
// every partition's record is set to resume after the purge point. The
// save file is removed when all is done. A run cut short is finished by
// the next one: if the cut came before the purge, the messages are still in
// the stream and are found again; if after, the saved ones are published
// (again: a message published before the cut then comes twice, and its
// events, which keep their ids, count once as duplicate_id). The duplicate
// and rate windows lose the purged history: events published again are
// judged without it.
func RepairStream(ctx context.Context, js jetstream.JetStream, st RawStore, partitions int, saveTo string, dryRun bool) (StreamRepair, error) {
	var r StreamRepair
	saved, cut, err := loadMsgs(saveTo)
	if err != nil {
		return r, err
	}
	all := make([]int, partitions)
	for p := range all {
		all[p] = p
	}
	states, err := ReadStates(ctx, js, st, all)
	if err != nil {
		return r, err
	}
	if len(states) == 0 {
		return r, errors.New("validate: repair stream: no partitions")
	}
	r.StreamLast = states[0].StreamLast
	r.Used = r.StreamLast
	for _, s := range states {
		r.Used = max(r.Used, s.RawMax)
		if s.HasRecord {
			r.Used = max(r.Used, s.Record.Last)
		}
	}
	if cut {
		if r.Used == r.StreamLast {
			return finishCut(ctx, js, saveTo, saved, r, dryRun)
		}
		// Cut before the purge: the survivors are found again below.
		if !dryRun {
			if err := os.Remove(saveTo); err != nil {
				return r, fmt.Errorf("validate: repair stream: %w", err)
			}
		}
	}
	if r.Used == r.StreamLast {
		r.NothingToDo = true
		return r, nil
	}
	s, err := js.Stream(ctx, viewcount.StreamName)
	if err != nil {
		return r, fmt.Errorf("validate: repair stream: %w", err)
	}
	var keep []savedMsg
	for _, p := range all {
		if keep, err = uncounted(ctx, s, st, p, r.StreamLast, keep); err != nil {
			return r, err
		}
	}
	r.Messages = len(keep)
	for _, m := range keep {
		n, _ := viewcount.DecodeEvents(nil, m.Data)
		r.Events += len(n)
	}
	r.Partitions = partitions
	if dryRun {
		return r, nil
	}
	if err := saveMsgs(saveTo, keep); err != nil {
		return r, err
	}
	// A purge up to a sequence beyond the last empties the stream and sets
	// its first sequence there (nats-server fileStore.purgeLocked), so the
	// next message gets Used+1.
	if err := s.Purge(ctx, jetstream.WithPurgeSequence(r.Used+1)); err != nil {
		return r, fmt.Errorf("validate: repair stream: purge below %d: %w", r.Used+1, err)
	}
	intents, err := js.KeyValue(ctx, viewcount.BucketRollup)
	if err != nil {
		return r, fmt.Errorf("validate: repair stream: %w", err)
	}
	for _, p := range all {
		if err := progress.Write(ctx, intents, p, r.Used); err != nil {
			return r, err
		}
	}
	for i, m := range keep {
		if _, err := js.Publish(ctx, m.Subject, m.Data); err != nil {
			return r, fmt.Errorf("validate: repair stream: publish again (%d of %d done; the rest is in %s): %w", i, len(keep), saveTo, err)
		}
	}
	if err := os.Remove(saveTo); err != nil {
		return r, fmt.Errorf("validate: repair stream: %w", err)
	}
	return r, nil
}

// uncounted appends to keep partition p's messages up to seq last whose
// events views_raw lacks, reduced to those events.
func uncounted(ctx context.Context, s jetstream.Stream, st RawStore, p int, last uint64, keep []savedMsg) ([]savedMsg, error) {
	subject := viewcount.Subject(p)
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		return keep, fmt.Errorf("validate: repair stream: partition %d: %w", p, err)
	}
	if info.State.Subjects[subject] == 0 {
		return keep, nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		return keep, fmt.Errorf("validate: repair stream: partition %d: consumer: %w", p, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return keep, fmt.Errorf("validate: repair stream: partition %d: consumer: %w", p, err)
	}
	defer it.Stop()
	type held struct {
		seq uint64
		evs []viewcount.Event
	}
	var chunk []held
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		have, err := counted(ctx, st, p, chunk[0].seq, chunk[len(chunk)-1].seq)
		if err != nil {
			return err
		}
		for _, h := range chunk {
			var missing []viewcount.Event
			for i, e := range h.evs {
				if have[rawKey{h.seq, uint32(i)}] != (rawRow{e.ID, e.Time.UnixMilli()}) {
					missing = append(missing, e)
				}
			}
			if len(missing) > 0 {
				keep = append(keep, savedMsg{Subject: subject, Data: viewcount.AppendEvents(nil, missing)})
			}
		}
		chunk = chunk[:0]
		return nil
	}
	for {
		nctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		msg, err := it.Next(jetstream.NextContext(nctx))
		cancel()
		if err != nil {
			return keep, fmt.Errorf("validate: repair stream: partition %d: read: %w", p, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return keep, fmt.Errorf("validate: repair stream: partition %d: metadata: %w", p, err)
		}
		if md.Sequence.Stream > last {
			break
		}
		if _, tick := tickTime(msg); !tick {
			evs, err := viewcount.DecodeEvents(nil, msg.Data())
			if err != nil {
				return keep, fmt.Errorf("validate: repair stream: partition %d: seq %d: %w", p, md.Sequence.Stream, err)
			}
			chunk = append(chunk, held{seq: md.Sequence.Stream, evs: evs})
		}
		if len(chunk) >= 1<<16 {
			if err := flush(); err != nil {
				return keep, err
			}
		}
		if md.NumPending == 0 || md.Sequence.Stream == last {
			break
		}
	}
	return keep, flush()
}

type rawKey struct {
	seq uint64
	idx uint32
}

type rawRow struct {
	id     string
	timeMs int64
}

// counted returns the events views_raw holds for partition p's sequences
// from-to.
func counted(ctx context.Context, st RawStore, p int, from, to uint64) (map[rawKey]rawRow, error) {
	res, err := st.Query(ctx, queries.Text(queries.PartitionEvents), store.Params{"partition": strconv.Itoa(p),
		"from": strconv.FormatUint(from, 10), "to": strconv.FormatUint(to, 10)})
	if err != nil {
		return nil, fmt.Errorf("validate: repair stream: partition %d: views_raw: %w", p, err)
	}
	out := make(map[rawKey]rawRow, res.Len())
	for res.Next() {
		out[rawKey{res.Uint64("seq"), res.Uint32("idx")}] = rawRow{res.String("event_id"), res.Int64("time_ms")}
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("validate: repair stream: partition %d: views_raw row: %w", p, err)
	}
	return out, nil
}

// saveMsgs writes msgs to path, synced, before the purge removes them from
// the stream.
// finishCut publishes what a repair cut short after its purge had saved,
// then removes the file.
func finishCut(ctx context.Context, js jetstream.JetStream, saveTo string, saved []savedMsg, r StreamRepair, dryRun bool) (StreamRepair, error) {
	r.Resumed, r.Messages = true, len(saved)
	for _, m := range saved {
		n, _ := viewcount.DecodeEvents(nil, m.Data)
		r.Events += len(n)
	}
	if dryRun {
		return r, nil
	}
	for i, m := range saved {
		if _, err := js.Publish(ctx, m.Subject, m.Data); err != nil {
			return r, fmt.Errorf("validate: repair stream: publish the saved messages (%d of %d done; run the repair again to finish): %w", i, len(saved), err)
		}
	}
	if err := os.Remove(saveTo); err != nil {
		return r, fmt.Errorf("validate: repair stream: %w", err)
	}
	return r, nil
}

// loadMsgs reads what a cut-short repair saved; cut is false when there is
// no file.
func loadMsgs(path string) (msgs []savedMsg, cut bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("validate: repair stream: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	for {
		var m savedMsg
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return msgs, true, nil
		} else if err != nil {
			return nil, true, fmt.Errorf("validate: repair stream: read %s (left by a repair cut short): %w", path, err)
		}
		msgs = append(msgs, m)
	}
}

func saveMsgs(path string, msgs []savedMsg) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("validate: repair stream: save: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, m := range msgs {
		if err = enc.Encode(m); err != nil {
			break
		}
	}
	err = errors.Join(err, f.Sync(), f.Close())
	if err != nil {
		return fmt.Errorf("validate: repair stream: save %s: %w", path, err)
	}
	return nil
}
