// Package apptest is the system tests' harness: it starts whole viewcount
// processes in-process through cmd/viewcount/app's exported entry points
// (NewMain, Run, Close, and the command line through app.Run) on
// 127.0.0.1:0, and gives the tests under test/ what they share: an HTTP
// client that sends hits as browsers do, a polling helper, made-up
// visitors, and reads of the server's database.
//
// It never reaches into app's internals: what a test cannot see through
// HTTP, the command line or the database is not a system test's to
// assert. It is imported by tests only.
package apptest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/validate/judge"
)

// Main runs a system test package's tests; call it from TestMain:
// os.Exit(apptest.Main(m)). chDB runs one engine per process, so every
// test shares storetest's engine (kept open across restarts of a server)
// and gets its own database.
func Main(m *testing.M) int { return storetest.Main(m) }

// AdminToken is the admin token of the servers Start runs.
const AdminToken = "test-admin-token"

// Timer is the flush, feed and public-lag interval of end-to-end configs.
const Timer = 100 * time.Millisecond

var dbSeq atomic.Int64

// NewDB returns a database name no other test of the process uses.
func NewDB() string { return fmt.Sprintf("e2e_%d_%d", os.Getpid(), dbSeq.Add(1)) }

// Server is one whole viewcount process started by Start, with a store
// handle of the harness's own on its database (the shared engine), so a
// test reads views_raw as an analyst would, not through the server.
type Server struct {
	*app.Main
	Config app.Config
	Store  store.Store
}

// Start runs a whole viewcount process (all roles, embedded NATS and
// chDB) on 127.0.0.1:0. data may be reused to restart on the same files.
func Start(t *testing.T, data, db string) *Server {
	t.Helper()
	return StartWith(t, data, db, nil, time.Now)
}

// StartWith is Start with a config tweak and a clock. It skips under
// -short: the system lane runs it.
func StartWith(t *testing.T, data, db string, tweak func(*app.Config), now func() time.Time) *Server {
	t.Helper()
	cfg := config(t, data, db)
	if tweak != nil {
		tweak(&cfg)
	}
	m := app.NewMain(cfg, app.Roles{Ingest: true, Validate: true, API: true}, logger(t), io.Discard, now)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		m.Close()
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(m.Close)
	st, err := store.Open(ctx, store.Config{DSN: cfg.Store.DSN, DataDir: cfg.Store.DataDir, Database: cfg.Store.Database}, nil)
	if err != nil {
		t.Fatalf("open the server's store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &Server{Main: m, Config: cfg, Store: st}
}

// config is the config Start runs a server with. It skips under -short
// and boots the shared engine.
func config(t *testing.T, data, db string) app.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("end to end: the system lane runs it (make test-system)")
	}
	storetest.Open(t) // boots the shared engine and keeps it up
	var cfg app.Config
	cfg.Listen, cfg.Data, cfg.Store.DataDir, cfg.Store.Database = "127.0.0.1:0", data, storetest.Dir(), db
	cfg.API.AdminToken, cfg.Stream.Partitions = AdminToken, 4
	// Short timers (production: a 1 s flush and held tick, a 3 s feed, a
	// 10 s public lag), so a test waits on its polling deadline, not on a
	// timer. A test whose assertion depends on a timer's length sets that one.
	cfg.Validate.FlushEvery, cfg.Validate.HeldEvery, cfg.Validate.Feed.Every = Timer, Timer, Timer
	cfg.API.PublicLag = Timer
	cfg.Stream.Retention, cfg.Validate.Rules = 72*time.Hour, judge.Config{DuplicateWindow: 30 * time.Minute}
	// Tests give each visitor its own address through X-Forwarded-For.
	cfg.Ingest.TrustedProxies = []string{"127.0.0.1/32"}
	// Those addresses are made up, and hosting networks announce some
	// of them: tests that judge AS numbers turn the lookup on.
	cfg.Ingest.ASNDB = "off"
	return cfg
}

// logger logs a server's warnings and errors into the test's log.
func logger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// testWriter writes each line into t's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Eventually polls f until it returns "" or the deadline passes.
func Eventually(t *testing.T, d time.Duration, f func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not reached within %s: %s", d, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
