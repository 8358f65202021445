package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/sql/store"
)

const repairUsage = `usage:
  viewcount check           [flags]   verify progress records, stream, store parts and rollups; exit 1 on a problem
  viewcount repair progress [flags]   reset each partition's progress record to what views_raw holds
  viewcount repair stream   [flags]   move the stream past a lost tail so new events get fresh sequences
  viewcount repair rollups  [flags]   rebuild every rollup from views_raw

The flags are serve's (--data, NATS_URL, CLICKHOUSE_DSN, ...). On the
embedded defaults stop the server first: the data dir is locked by its owner.
`

// runRepair runs `viewcount repair <what>`.
func runRepair(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, repairUsage)
		return errors.New("repair: say what to repair")
	}
	switch args[0] {
	case "progress":
		return repairProgress(args[1:], stdout, stderr)
	case "stream":
		return repairStream(args[1:], stdout, stderr)
	case "rollups":
		return repairRollups(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, repairUsage)
		return nil
	}
	fmt.Fprint(stderr, repairUsage)
	return fmt.Errorf("repair: unknown target %q", args[0])
}

// target is what a check or a repair works on: the store and, for the
// progress commands, the stream. On the embedded defaults it holds the
// data-dir lock, so it fails at once, naming the owner, while a server runs
// (chDB and the embedded NATS server each assume they are alone).
type target struct {
	cfg    Config
	logger *slog.Logger
	store  store.Store
	conn   *stream.Conn // nil unless asked for
	lock   *dirLock
}

// openTarget parses serve's flags and opens the store, and the stream with
// withStream.
func openTarget(ctx context.Context, name string, args []string, stderr io.Writer, withStream bool) (t *target, err error) {
	cfg, err := ParseConfig(name, args)
	if err != nil {
		return nil, err
	}
	t = &target{cfg: cfg, logger: newLogger(stderr, cfg.LogLevel)}
	defer func() {
		if err != nil {
			t.Close()
			t = nil
		}
	}()
	if cfg.Store.DSN == "" || (withStream && cfg.Stream.URL == "") {
		if t.lock, err = lockDataDir(cfg.Data); err != nil {
			return t, fmt.Errorf("%s: %w (stop the server first)", name, err)
		}
	}
	if withStream {
		scfg := cfg.Stream
		scfg.DataDir = cfg.Data
		t.conn, err = stream.Open(ctx, scfg, t.logger)
		if err != nil {
			return t, fmt.Errorf("%s: %w", name, err)
		}
	}
	if t.store, err = store.Open(ctx, cfg.Store.Config, t.logger); err != nil {
		return t, fmt.Errorf("%s: %w", name, err)
	}
	return t, nil
}

// Close releases what openTarget opened, the lock last.
func (t *target) Close() {
	if t.store != nil {
		if err := t.store.Close(); err != nil {
			t.logger.Warn("store close", "component", "repair", "err", err)
		}
	}
	if t.conn != nil {
		t.conn.Close()
	}
	t.lock.Unlock()
}

// takeFlag removes the boolean flag name (-name, --name, --name=true|false)
// from args, so the rest parse as serve's flags.
func takeFlag(args []string, name string) (bool, []string) {
	on := false
	rest := make([]string, 0, len(args))
	for _, a := range args {
		switch a {
		case "-" + name, "--" + name, "-" + name + "=true", "--" + name + "=true":
			on = true
		case "-" + name + "=false", "--" + name + "=false":
			on = false
		default:
			rest = append(rest, a)
		}
	}
	return on, rest
}
