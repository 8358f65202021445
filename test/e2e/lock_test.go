package e2e

import (
	"errors"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSecondProcessOnDataDir: a second process on a live data dir (here an
// ingest role, which used to open the embedded NATS store under the first
// and acknowledge hits nobody counted) fails before it opens anything.
func TestSecondProcessOnDataDir(t *testing.T) {
	data := t.TempDir()
	m := apptest.Start(t, data, apptest.NewDB())
	cfg := app.Config{Listen: "127.0.0.1:0", Data: data}
	cfg.Store.DataDir, cfg.API.PublicLag, cfg.Stream.Retention = data, time.Second, 72*time.Hour
	second := app.NewMain(cfg,
		app.Roles{Ingest: true}, slog.New(slog.DiscardHandler), io.Discard, time.Now)
	err := second.Run(t.Context())
	second.Close()
	if !errors.Is(err, app.ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second process: %v, want ErrLocked naming pid %d", err, os.Getpid())
	}
	// The first is untouched: it still acknowledges hits.
	if code := apptest.NewClient(t, m).Send(apptest.Hit{IP: "203.0.113.9", UA: "Mozilla/5.0", Site: "lock.example", Page: "/still-here"}); code != 200 {
		t.Fatalf("first process after the second tried: pixel %d", code)
	}
}

// TestServeOnReadOnlyDataDir: the finding's case end to end. A process on
// a read-only data dir used to hang 30 s inside the embedded NATS server
// and name no cause; it now fails at once, saying what is wrong.
func TestServeOnReadOnlyDataDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a read-only tmpfs (CI runs as root)")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=1m"); err != nil {
		t.Skipf("cannot mount a read-only tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	cfg := app.Config{Listen: "127.0.0.1:0", Data: dir}
	cfg.Store.DataDir, cfg.API.PublicLag, cfg.Stream.Retention = dir, time.Second, 72*time.Hour
	m := app.NewMain(cfg,
		app.Roles{Ingest: true}, slog.New(slog.DiscardHandler), io.Discard, time.Now)
	began := time.Now()
	err := m.Run(t.Context())
	m.Close()
	if took := time.Since(began); err == nil || !strings.Contains(err.Error(), "writable") || took > 5*time.Second {
		t.Fatalf("serve on a read-only data dir: %v after %s, want an error naming it at once", err, took)
	}
}
