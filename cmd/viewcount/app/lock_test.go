package app

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestLockDataDir: a second lock on the same dir fails at once naming the
// owner's pid; once released, the dir can be locked again.
func TestLockDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	l, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockDataDir(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second lock: %v, want ErrLocked naming pid %d", err, os.Getpid())
	}
	l.Unlock()
	l2, err := lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	l2.Unlock()
}

// TestLockReadOnlyDir: a data dir the process cannot write is named at
// once, not discovered 30 s later inside NATS or chDB.
func TestLockReadOnlyDir(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// root writes through permission bits: a read-only mount is what
		// stops it, as on the operator's machine.
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=1m"); err != nil {
			t.Skipf("cannot mount a read-only tmpfs (%v): nothing read-only to test as root", err)
		}
		t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	} else if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	_, err := lockDataDir(dir)
	if err == nil || !strings.Contains(err.Error(), "writable") {
		t.Fatalf("lock of a read-only dir: %v", err)
	}
}
