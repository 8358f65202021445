// Package app is the viewcount command, importable: Run dispatches a
// command line, as cmd/viewcount's main does; `serve` runs all the roles in
// one process on embedded NATS and chDB; `ingest`, `validate` and `api` run
// one role each against a NATS cluster and a ClickHouse server; `site`
// manages the sites of a running server. NewMain, Run and Close start and
// stop the roles in-process, as the system tests under test/ do;
// ParseConfig builds a role's Config from a command line as Run does. The
// development tools (load generator, user-agent evaluation) are
// cmd/vcdev's, not this binary's.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const usage = `viewcount: self-hosted page-view counting with invalid-traffic filtering

usage:
  viewcount serve     [flags]   all roles in one process (embedded NATS + chDB by default)
  viewcount ingest    [flags]   HTTP ingestion only
  viewcount validate  [flags]   validators and the ClickHouse sink only
  viewcount api       [flags]   public counts and admin API only
  viewcount site add|rotate|delete DOMAIN, site list   manage sites (see 'viewcount site')
  viewcount token add --role analyst, token list, token revoke ID   analyst tokens for --sql-listen
  viewcount sql "SELECT …" [--format pretty|csv|tsv|json]           one read-only query via --sql-listen
  viewcount revalidate --site S --from T1 --to T2 [--dry-run]   judge a range again with the current rules
  viewcount correct add|undo|list   exclude a network, referrer or path, or allow a false positive, for a time range (see 'viewcount correct')
  viewcount explain --site S --id ID | --site S --ua UA …   every rule's decision on a stored view or a sample request
  viewcount reconcile [--from T1] [--to T2] [flags]   compare every rollup with a recount from views_raw; exit 1 on drift
  viewcount check     [flags]   verify progress, stream, store and rollups (server stopped)
  viewcount repair    progress|stream|rollups [flags]   see docs/operations.md, Recovery
  viewcount version
  viewcount docs flags           the flags below as Markdown (docs/configuration.md)
  viewcount health    [URL]     exit 0 when URL (default: /readyz on VIEWCOUNT_LISTEN) answers 200; the image's health check

Run 'viewcount serve -h' for the flags (or read docs/configuration.md); each has an environment variable.
`

// version is the binary's, set by cmd/viewcount's main (Execute).
var version = "dev"

// Execute runs the command line args (without the program name) as the
// viewcount binary of version ver, and returns its exit code.
func Execute(args []string, ver string) int {
	version = ver
	if err := Run(args, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "viewcount:", err)
		}
		return 1
	}
	return 0
}

// Run runs one command line (without the program name), writing its output
// to stdout and its diagnostics to stderr.
func Run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	cmd, rest := args[0], args[1:]
	var roles Roles
	switch cmd {
	case "serve":
		roles = Roles{Ingest: true, Validate: true, API: true}
	case "ingest":
		roles = Roles{Ingest: true}
	case "validate":
		roles = Roles{Validate: true}
	case "api":
		roles = Roles{API: true}
	case "site":
		return runSite(rest, stdout, stderr)
	case "token":
		return runToken(rest, stdout, stderr)
	case "sql":
		return runSQL(rest, stdout)
	case "revalidate":
		return runRevalidate(rest, stdout, stderr)
	case "reconcile":
		return runReconcile(rest, stdout, stderr)
	case "correct":
		return runCorrect(rest, stdout, stderr)
	case "explain":
		return runExplain(rest, stdout, stderr)
	case "check":
		return runCheck(rest, stdout, stderr)
	case "repair":
		return runRepair(rest, stdout, stderr)
	case "health":
		return runHealth(rest, stdout)
	case "docs":
		return runDocs(rest, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "viewcount", version)
		return nil
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
	cfg, err := ParseConfig(cmd, rest)
	if err != nil {
		return err
	}
	logger := newLogger(stderr, cfg.LogLevel)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := NewMain(cfg, roles, logger, stdout, time.Now)
	if err := m.Run(ctx); err != nil {
		m.Close()
		return err
	}
	logger.Info("viewcount running", "command", cmd, "listen", m.Addr(), "version", version)
	select {
	case <-ctx.Done():
	case err = <-m.Failed():
		logger.Error("role failed", "err", err)
	}
	m.Close()
	return err
}

func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	switch strings.ToLower(level) {
	case "debug":
		l = slog.LevelDebug
	case "warn":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}
