package store

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestMergeThreadsNice: in a process without CAP_SYS_NICE (a container
// with Docker's default capabilities), where the engine leaves its merge
// threads at the process's priority, the store lowers them to mergeNice.
// A child test binary runs under setpriv with the capability taken out of
// its bounding set, so the root that runs the tests lacks it after exec.
func TestMergeThreadsNice(t *testing.T) {
	if testing.Short() {
		t.Skip("boots chDB in a child process")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv (util-linux) to start a child without CAP_SYS_NICE")
	}
	runChild(t, "TestMergeThreadsNiceChild", "VIEWCOUNT_TEST_MERGE_NICE",
		setpriv, "--inh-caps=-sys_nice", "--bounding-set=-sys_nice")
}

func TestMergeThreadsNiceChild(t *testing.T) {
	dir := os.Getenv("VIEWCOUNT_TEST_MERGE_NICE")
	if dir == "" {
		t.Skip("run by TestMergeThreadsNice")
	}
	if hasSysNice(t) {
		t.Fatal("the child has CAP_SYS_NICE: setpriv did not drop it")
	}
	ctx := context.Background()
	st, err := Open(ctx, Config{DataDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s := st.(*chdbStore)
	// Merges run on the pool's threads: several parts, then a merge of
	// them all, which returns once it is done.
	mustRun(t, s, "CREATE TABLE m (x UInt64) ENGINE = MergeTree ORDER BY x")
	for i := range 6 {
		mustRun(t, s, fmt.Sprintf("INSERT INTO m SELECT number FROM numbers(%d, 1000)", i*1000))
	}
	mustRun(t, s, "OPTIMIZE TABLE m FINAL")

	// The store's own loop may have run already; a nicer of its own sees
	// every merge thread as it is now.
	threads := mergeThreads(t)
	if len(threads) == 0 {
		t.Fatal("no merge threads after a merge")
	}
	var m mergeNicer
	if _, err := m.renice(); err != nil {
		t.Fatal(err)
	}
	for _, tid := range mergeThreads(t) {
		if n, err := threadNice(tid); err != nil || n != mergeNice {
			t.Errorf("merge thread %d: nice %d (%v), want %d", tid, n, err, mergeNice)
		}
	}
	if n, err := m.renice(); err != nil || n != 0 {
		t.Errorf("a second pass changed %d threads (%v), want 0", n, err)
	}
	// The process itself keeps its priority: only merges yield.
	if n, err := threadNice(os.Getpid()); err != nil || n != 0 {
		t.Errorf("the main thread: nice %d (%v), want 0", n, err)
	}
}

// hasSysNice says whether this process's effective capabilities hold
// CAP_SYS_NICE (23).
func hasSysNice(t *testing.T) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return caps&(1<<23) != 0
		}
	}
	t.Fatal("no CapEff in /proc/self/status")
	return false
}

// mergeThreads lists the engine's merge threads.
func mergeThreads(t *testing.T) []int {
	return threadsNamed(t, func(comm string) bool { return strings.HasPrefix(comm, mergeThreadPrefix) })
}

// threadsNamed lists this process's threads whose name (comm, with its
// newline) keep accepts. It fails t with Error, not Fatal: tests call it
// from goroutines that sample threads.
func threadsNamed(t *testing.T, keep func(comm string) bool) []int {
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Error(err)
		return nil
	}
	var out []int
	for _, e := range entries {
		comm, err := os.ReadFile("/proc/self/task/" + e.Name() + "/comm")
		if err != nil || !keep(string(comm)) {
			continue
		}
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, tid)
		}
	}
	return out
}

func mustRun(t *testing.T, s *chdbStore, q string) {
	t.Helper()
	if err := s.Exec(context.Background(), q, nil); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
