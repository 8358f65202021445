package app

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockName is the file in a data dir that its owning process holds locked.
const lockName = "LOCK"

// ErrLocked is returned when another process owns the data dir.
var ErrLocked = errors.New("data dir in use by another viewcount process")

// dirLock is an exclusive flock(2) on <data dir>/LOCK. The embedded NATS
// server and chDB each assume they are alone with their files, and neither
// checks before it opens (NATS rewrites its index on start): the lock is
// taken before either opens anything, so a second process sharing the dir
// fails at once, naming the owner. The kernel drops a flock when its holder
// dies, kill -9 included, so a stale LOCK file never blocks a restart.
type dirLock struct{ f *os.File }

// lockDataDir creates dir if needed and locks it. A directory the process
// cannot write fails here, with the cause, rather than later inside NATS or
// chDB.
func lockDataDir(dir string) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("data dir %s: cannot create %s (is it writable?): %w", dir, lockName, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		owner := "unknown pid"
		if b, rerr := os.ReadFile(path); rerr == nil && strings.TrimSpace(string(b)) != "" {
			owner = "pid " + strings.TrimSpace(string(b))
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s holds %s", ErrLocked, owner, path)
		}
		return nil, fmt.Errorf("data dir %s: lock: %w", dir, err)
	}
	// The pid is for the message above and for operators; the lock itself
	// is the flock, not the file's contents.
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("data dir %s: write %s (is the disk full?): %w", dir, lockName, err)
		}
	}
	return &dirLock{f: f}, nil
}

// Unlock releases the lock; the file stays, since removing it would race
// with a process that has just opened it.
func (l *dirLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}
