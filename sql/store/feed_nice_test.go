package store_test

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/sql/store"
)

// TestStoreWorkAtNice: the engine runs the rollup feed and the views_raw
// inserts at nice 10 (os_threads_nice_value_query and
// os_threads_nice_value_materialized_view), so in `serve` the store's
// bursts run on the CPU the requests leave, as merges do, and its threads
// are back at the process's priority after. The engine applies the
// settings only with CAP_SYS_NICE, as it does the merges' (the store
// cannot lower a query's threads for it: they are pool threads that run
// other queries too). Threads of the engine other than the merge pool
// are watched while a feed and an insert run; one seen at nice 10 is the
// setting at work.
func TestStoreWorkAtNice(t *testing.T) {
	if testing.Short() {
		t.Skip("samples the engine's threads through a feed")
	}
	if !store.HasSysNice(t) {
		t.Skip("without CAP_SYS_NICE the engine leaves a query's threads at the process's priority")
	}
	s := migrated(t, openTestStore)

	var low atomic.Int64 // samples with a thread other than a merge's at nice >= 10
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if lowered(t) > 0 {
				low.Add(1)
			}
		}
	})
	insertFeedBatches(t, s)
	inserts := low.Load()
	if err := feed.Run(t.Context(), s, 1, 1, feedBatches, time.Time{}); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wg.Wait()
	if inserts == 0 {
		t.Error("no thread of the engine was seen at nice 10 through 20 inserts")
	}
	if low.Load() == inserts {
		t.Error("no thread of the engine was seen at nice 10 through a feed")
	}
	// The threads that called the engine are the Go runtime's: none may
	// keep the query's nice value and run requests slowly after. (The
	// engine's pool threads give theirs back as they finish, which may be
	// just after the call returns, so they are not checked here.)
	if n := goThreadsLowered(t); n != 0 {
		t.Errorf("%d of the Go runtime's threads still at nice 10 after the store's work", n)
	}
}

// goThreadsLowered counts the threads named as the process is (the Go
// runtime's; the engine names its own) at nice 10 or more.
func goThreadsLowered(t *testing.T) int {
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return loweredWhere(t, func(comm string) bool { return comm == string(self) })
}

// lowered counts this process's threads at nice 10 or more, merge threads
// left out (the store lowers those always, chdb_nice.go).
func lowered(t *testing.T) int {
	return loweredWhere(t, func(comm string) bool { return !strings.HasPrefix(comm, "MergeMutate") })
}

// loweredWhere counts this process's threads whose name (comm, with its
// newline) keep accepts and whose nice value is 10 or more.
func loweredWhere(t *testing.T, keep func(comm string) bool) int {
	n := 0
	for _, tid := range store.ThreadsNamed(t, keep) {
		if nice, err := store.ThreadNice(tid); err == nil && nice >= 10 {
			n++
		}
	}
	return n
}
