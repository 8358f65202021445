package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount/ingest/stream"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate"
)

// repairStreamSave is where `repair stream` keeps the events it publishes
// again while the stream is purged, in the data dir.
const repairStreamSave = "repair-stream-events.jsonl"

// progressTargets is the stream and the store a progress repair works on,
// with the data dir locked when either is embedded.
type progressTargets struct {
	conn  *stream.Conn
	store store.Store
	lock  *dirLock
}

// openProgressTargets parses serve's flags (plus --dry-run) and opens the
// stream and the store. On the embedded defaults it takes the data-dir
// lock, so it fails at once, naming the owner, while a server runs.
func openProgressTargets(ctx context.Context, name string, args []string, stderr io.Writer) (t *progressTargets, cfg Config, dryRun bool, err error) {
	var rest []string
	for _, a := range args {
		if a == "--dry-run" || a == "-dry-run" {
			dryRun = true
			continue
		}
		rest = append(rest, a)
	}
	if cfg, err = parseConfig(name, rest); err != nil {
		return nil, cfg, dryRun, err
	}
	logger := newLogger(stderr, cfg.LogLevel)
	t = &progressTargets{}
	defer func() {
		if err != nil {
			t.Close()
			t = nil
		}
	}()
	if cfg.NATSURL == "" || cfg.ClickHouseDSN == "" {
		if t.lock, err = lockDataDir(cfg.Data); err != nil {
			return t, cfg, dryRun, fmt.Errorf("%s (stop the server first): %w", name, err)
		}
	}
	t.conn, err = stream.Open(ctx, stream.Config{URL: cfg.NATSURL, DataDir: cfg.Data, Partitions: cfg.Partitions,
		Retention: cfg.Retention, SyncAlways: cfg.NATSSyncAlways}, logger)
	if err != nil {
		return t, cfg, dryRun, err
	}
	t.store, err = store.Open(ctx, store.Config{DSN: cfg.ClickHouseDSN, DataDir: cfg.StoreDir, Database: cfg.Database}, logger)
	if err != nil {
		return t, cfg, dryRun, err
	}
	// views_raw must exist for the checks to read it, even on a new store.
	return t, cfg, dryRun, rollup.Migrate(ctx, t.store, logger)
}

func (t *progressTargets) Close() {
	if t.store != nil {
		_ = t.store.Close()
	}
	if t.conn != nil {
		t.conn.Close()
	}
	t.lock.Unlock()
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
	t, _, dryRun, err := openProgressTargets(ctx, "repair progress", args, stderr)
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
	t, cfg, dryRun, err := openProgressTargets(ctx, "repair stream", args, stderr)
	if err != nil {
		return err
	}
	defer t.Close()
	save := filepath.Join(cfg.Data, repairStreamSave)
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
func reportLeft(ctx context.Context, t *progressTargets, stdout io.Writer) error {
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
