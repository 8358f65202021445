package store

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// mergeThreadPrefix names the engine's merge and mutation threads (the
// MergeMutate pool), as /proc/self/task/*/comm shows them.
const mergeThreadPrefix = "MergeMutate"

// reniceEvery is how often the store looks for merge threads the engine
// could not lower itself. The pool's threads are started once and live
// as long as the engine; a new one runs at most this long at the
// process's priority.
const reniceEvery = time.Second

// merge threads' nice values, for lowering those the engine did not.
//
// The engine lowers its merge threads to mergeNice only with CAP_SYS_NICE
// (it checks the capability before any change), which a container with
// Docker's default capabilities lacks. Raising a thread's own nice value
// needs no capability, so the store does it instead: without it a large
// views_raw merge takes both cores of a small box and requests queue
// behind it (docs/operations.md, "Merges behind requests").
type mergeNicer struct {
	done map[int]bool // threads already at mergeNice or lower in priority
}

// renice lowers every merge thread not yet seen at mergeNice, and returns
// how many it changed. A thread that is gone by the time it is read is
// skipped.
func (m *mergeNicer) renice() (int, error) {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, fmt.Errorf("store: list threads: %w", err)
	}
	if m.done == nil {
		m.done = make(map[int]bool)
	}
	seen := make(map[int]bool, len(m.done))
	changed := 0
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if m.done[tid] {
			seen[tid] = true
			continue
		}
		comm, err := os.ReadFile("/proc/self/task/" + e.Name() + "/comm")
		if err != nil {
			continue // exited
		}
		if !strings.HasPrefix(string(bytes.TrimSpace(comm)), mergeThreadPrefix) {
			continue
		}
		nice, err := threadNice(tid)
		if err != nil {
			continue
		}
		if nice < mergeNice {
			if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, mergeNice); err != nil {
				return changed, fmt.Errorf("store: lower merge thread %d to nice %d: %w", tid, mergeNice, err)
			}
			changed++
		}
		seen[tid] = true
	}
	m.done = seen // forget threads that exited: their ids may be reused
	return changed, nil
}

// threadNice reads a thread of this process's nice value from its stat
// line: the 19th field, counted after the command name's closing
// parenthesis (the name may hold spaces and parentheses).
func threadNice(tid int) (int, error) {
	b, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(tid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("store: thread %d: stat without a command name", tid)
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 17 {
		return 0, fmt.Errorf("store: thread %d: short stat line", tid)
	}
	return strconv.Atoi(f[16])
}

// reniceMerges runs m.renice every reniceEvery until done is closed. A
// failure is logged once: it repeats every time, and merges then run at
// the process's priority, as they did before.
func (s *chdbStore) reniceMerges() {
	var m mergeNicer
	t := time.NewTicker(reniceEvery)
	defer t.Stop()
	warned := false
	for {
		if n, err := m.renice(); err != nil && !warned {
			s.logger.Warn("merge threads keep the process's priority", "err", err)
			warned = true
		} else if n > 0 {
			s.logger.Debug("merge threads lowered", "threads", n, "nice", mergeNice)
		}
		select {
		case <-s.done:
			return
		case <-t.C:
		}
	}
}
