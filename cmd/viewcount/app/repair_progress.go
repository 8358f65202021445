package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate"
)

// repairStreamSave is where `repair stream` keeps the events it publishes
// again while the stream is purged, in the data dir.
const repairStreamSave = "repair-stream-events.jsonl"

// openProgressTarget opens the stream and the store for a progress repair
// (--dry-run taken from args), migrated: views_raw must exist for the
// checks to read it, even on a new store.
func openProgressTarget(ctx context.Context, name string, args []string, stderr io.Writer) (t *target, dryRun bool, err error) {
	dryRun, args = takeFlag(args, "dry-run")
	if t, err = openTarget(ctx, name, args, stderr, true); err != nil {
		return nil, dryRun, err
	}
	if err := migrations.Apply(ctx, t.store, t.logger); err != nil {
		t.Close()
		return nil, dryRun, err
	}
	return t, dryRun, nil
}

func allPartitions(n int) []int {
	out := make([]int, n)
	for p := range out {
		out[p] = p
	}
	return out
}

// checkProgress returns each partition's progress problem (a record beyond
// the stream's end or behind views_raw), with the repair that fixes it; it
// changes nothing. For `viewcount check`.
func checkProgress(ctx context.Context, js jetstream.JetStream, st store.Store, partitions int) ([]string, error) {
	problems, err := validate.CheckProgress(ctx, js, st, allPartitions(partitions))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = p.String()
	}
	return out, nil
}

// repairProgress runs `viewcount repair progress`: see repairUsage.
func repairProgress(args []string, stdout, stderr io.Writer) error {
	ctx := context.Background()
	t, dryRun, err := openProgressTarget(ctx, "repair progress", args, stderr)
	if err != nil {
		return err
	}
	defer t.Close()
	changes, err := validate.RepairProgress(ctx, t.conn.JS, t.store, allPartitions(t.conn.Partitions), dryRun)
	verb := "set"
	if dryRun {
		verb = "would set"
	}
	for _, c := range changes {
		fmt.Fprintf(stdout, "%s %s\n", verb, c)
	}
	if err != nil {
		return fmt.Errorf("repair progress: %w", err)
	}
	if len(changes) == 0 {
		fmt.Fprintln(stdout, "no progress record is behind views_raw: nothing to repair")
	}
	if dryRun {
		return nil
	}
	return reportLeft(ctx, t, stdout)
}

// repairStream runs `viewcount repair stream`: see repairUsage.
func repairStream(args []string, stdout, stderr io.Writer) error {
	ctx := context.Background()
	t, dryRun, err := openProgressTarget(ctx, "repair stream", args, stderr)
	if err != nil {
		return err
	}
	defer t.Close()
	save := filepath.Join(t.cfg.Data, repairStreamSave)
	r, err := validate.RepairStream(ctx, t.conn.JS, t.store, t.conn.Partitions, save, dryRun)
	if err != nil {
		return fmt.Errorf("repair stream: %w", err)
	}
	if r.NothingToDo {
		fmt.Fprintf(stdout, "the stream's last sequence %d is past every recorded or counted one: nothing to repair\n", r.StreamLast)
		return reportLeft(ctx, t, stdout)
	}
	verb := "moved"
	if dryRun {
		verb = "would move"
	}
	fmt.Fprintf(stdout, "%s the stream from last sequence %d past %d (the highest recorded or counted); %d surviving messages (%d events) not in views_raw published again; %d partitions resume after %d\n",
		verb, r.StreamLast, r.Used, r.Messages, r.Events, r.Partitions, r.Used)
	if dryRun {
		return nil
	}
	return reportLeft(ctx, t, stdout)
}

// reportLeft prints the problems a repair left and fails if there are any.
func reportLeft(ctx context.Context, t *target, stdout io.Writer) error {
	left, err := checkProgress(ctx, t.conn.JS, t.store, t.conn.Partitions)
	if err != nil {
		return err
	}
	for _, l := range left {
		fmt.Fprintln(stdout, "still:", l)
	}
	if len(left) > 0 {
		return errors.New("progress problems remain (see above)")
	}
	return nil
}
