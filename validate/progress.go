package validate

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/progress"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// ErrCorruptProgress is returned (wrapped) when a partition's progress
// record disagrees with the stream or with views_raw. Resuming anyway would
// lose events (a record beyond the stream's end waits for sequences that new
// events reuse) or count them twice (a record behind views_raw redoes
// inserted batches under new tokens), so the partition stops until an
// operator runs the repair the message names (docs/operations.md,
// Recovery).
var ErrCorruptProgress = errors.New("progress record inconsistent")

// RawStore is the store as the progress checks need it: a query of
// views_raw. store.Store implements it.
type RawStore interface {
	Query(ctx context.Context, query string, params store.Params) (*store.Result, error)
}

// RawMaxSeq returns the highest stream sequence views_raw holds for
// partition p above after, 0 when none.
func RawMaxSeq(ctx context.Context, st RawStore, p int, after uint64) (uint64, error) {
	res, err := st.Query(ctx, queries.Text(queries.PartitionMaxSeq), store.Params{"partition": strconv.Itoa(p),
		"after": strconv.FormatUint(after, 10)})
	if err != nil {
		return 0, fmt.Errorf("validate: partition %d: views_raw max seq: %w", p, err)
	}
	if res.Len() != 1 {
		return 0, fmt.Errorf("validate: partition %d: views_raw max seq: %d rows", p, res.Len())
	}
	res.Next()
	n := res.Uint64("max_seq")
	if err := res.Err(); err != nil {
		return 0, fmt.Errorf("validate: partition %d: views_raw max seq: %w", p, err)
	}
	return n, nil
}

// PartitionState is what the progress checks compare for one partition.
type PartitionState struct {
	Partition  int
	Record     progress.Record
	HasRecord  bool
	StreamLast uint64 // the stream's last sequence (all partitions)
	// RawMax is views_raw's highest seq of this partition above rawFloor,
	// 0 when none: every comparison Check makes is with a value at or
	// above the floor, so the rows below it need not be read.
	RawMax uint64
}

// rawFloor is the lower of the record's Last and the stream's last
// sequence (0 without a record): views_raw above it is what Check must see.
func (s PartitionState) rawFloor() uint64 {
	if !s.HasRecord {
		return 0
	}
	return min(s.Record.Last, s.StreamLast)
}

// The repair commands a Problem names.
const (
	CmdRepairStream   = "viewcount repair stream"
	CmdRepairProgress = "viewcount repair progress"
)

// Problem is one inconsistency CheckProgress found.
type Problem struct {
	Partition int
	Repair    string // the command that fixes it: CmdRepairStream or CmdRepairProgress
	Err       error  // wraps ErrCorruptProgress; its text names Repair
}

func (p Problem) String() string { return p.Err.Error() }

// Check returns the partition's inconsistency, nil when there is none. A
// stream behind what was already used comes first: its repair also resets
// the records.
func (s PartitionState) Check() *Problem {
	const stream, progress = CmdRepairStream, CmdRepairProgress
	fail := func(repair, format string, args ...any) *Problem {
		msg := fmt.Sprintf(format, args...)
		return &Problem{Partition: s.Partition, Repair: repair, Err: fmt.Errorf("%w: partition %d: %s; stop the server and run `%s`",
			ErrCorruptProgress, s.Partition, msg, repair)}
	}
	switch {
	case s.HasRecord && s.Record.Last > s.StreamLast:
		return fail(stream, "progress record (batch %d-%d) is beyond the stream's last sequence %d: the stream lost its tail, and new events would get sequences the partition skips",
			s.Record.First, s.Record.Last, s.StreamLast)
	case s.RawMax > s.StreamLast:
		return fail(stream, "views_raw holds seq %d, beyond the stream's last sequence %d: the stream lost its tail, and new events would reuse counted sequences",
			s.RawMax, s.StreamLast)
	case !s.HasRecord && s.RawMax > 0:
		return fail(progress, "no progress record, but views_raw holds rows up to seq %d: resuming from the start would count them twice", s.RawMax)
	case s.HasRecord && s.RawMax > s.Record.Last:
		return fail(progress, "progress record (batch %d-%d) is behind views_raw, which holds rows up to seq %d: resuming there would count them twice",
			s.Record.First, s.Record.Last, s.RawMax)
	}
	return nil
}

// ReadStates reads the progress state of each partition in partitions. st
// may be nil (a process without the store), leaving RawMax 0.
func ReadStates(ctx context.Context, js jetstream.JetStream, st RawStore, partitions []int) ([]PartitionState, error) {
	s, err := js.Stream(ctx, viewcount.StreamName)
	if err != nil {
		return nil, fmt.Errorf("validate: progress check: %w", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("validate: progress check: stream info: %w", err)
	}
	intents, err := js.KeyValue(ctx, viewcount.BucketRollup)
	if err != nil {
		return nil, fmt.Errorf("validate: progress check: %w", err)
	}
	out := make([]PartitionState, 0, len(partitions))
	for _, p := range partitions {
		ps := PartitionState{Partition: p, StreamLast: info.State.LastSeq}
		if ps.Record, ps.HasRecord, err = progress.Read(ctx, intents, p); err != nil {
			return nil, err
		}
		if st != nil {
			if ps.RawMax, err = RawMaxSeq(ctx, st, p, ps.rawFloor()); err != nil {
				return nil, err
			}
		}
		out = append(out, ps)
	}
	return out, nil
}

// CheckProgress compares each partition's progress record with the stream
// and views_raw and returns every problem found; it changes nothing.
func CheckProgress(ctx context.Context, js jetstream.JetStream, st RawStore, partitions []int) ([]Problem, error) {
	states, err := ReadStates(ctx, js, st, partitions)
	if err != nil {
		return nil, err
	}
	var out []Problem
	for _, s := range states {
		if p := s.Check(); p != nil {
			out = append(out, *p)
		}
	}
	return out, nil
}

// CheckStreamTail returns an error when the stream's last sequence is behind
// what a partition already used (its record, or views_raw when st is not
// nil). Ingest must not start then: hits acknowledged into reused
// sequences are skipped by the partitions, which is how a damaged stream
// block lost acknowledged views (TestRepairStream).
func CheckStreamTail(ctx context.Context, js jetstream.JetStream, st RawStore, partitions int) error {
	all := make([]int, partitions)
	for p := range all {
		all[p] = p
	}
	problems, err := CheckProgress(ctx, js, st, all)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range problems {
		if p.Repair == CmdRepairStream {
			errs = append(errs, p.Err)
		}
	}
	return errors.Join(errs...)
}

// checkStart stops the partition when its progress record disagrees with
// the stream or views_raw (see ErrCorruptProgress).
func (v *Validator) checkStart(ctx context.Context, p int, w Writer, s jetstream.Stream) error {
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("validate: partition %d: stream info: %w", p, err)
	}
	st := PartitionState{Partition: p, StreamLast: info.State.LastSeq}
	st.Record, st.HasRecord = w.Recorded()
	if v.opts.Raw != nil {
		if st.RawMax, err = RawMaxSeq(ctx, v.opts.Raw, p, st.rawFloor()); err != nil {
			return err
		}
	}
	if problem := st.Check(); problem != nil {
		return problem.Err
	}
	return nil
}
