package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestThreadsSeesItsOwnWork reads this test process's own threads while
// a goroutine spins on a thread of its own: the spin's CPU shows under the
// process's thread name, and never more than the wall time that passed
// times the threads.
func TestThreadsSeesItsOwnWork(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := filepath.Join("/proc", strconv.Itoa(os.Getpid()), "task")
	before, err := readThreads(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The spin runs until its own thread has used spin of CPU, however
	// long that takes on a busy machine: counted in CPU, not wall time.
	const spin = 50 * time.Millisecond
	start := time.Now()
	spun := make(chan error)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		own := func() (time.Duration, error) {
			b, err := os.ReadFile("/proc/thread-self/schedstat")
			if err != nil {
				return 0, err
			}
			st, err := parseSchedstat(string(b))
			return st.cpu, err
		}
		c0, err := own()
		for x := 0; err == nil; x++ {
			var c time.Duration
			if x%100_000 == 0 {
				if c, err = own(); err == nil && c-c0 >= spin {
					break
				}
			}
		}
		spun <- err
	}()
	if err := <-spun; err != nil {
		t.Fatal(err)
	}
	after, err := readThreads(dir)
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(start)
	groups := groupThreads(before, after)
	self := strings.TrimSpace(readComm(t))
	var cpu time.Duration
	for _, g := range groups {
		if g.name == self {
			cpu = g.cpu
		}
		if g.cpu > wall*time.Duration(g.threads) {
			t.Errorf("%s: %v of CPU in %v over %d threads", g.name, g.cpu, wall, g.threads)
		}
	}
	if cpu < spin {
		t.Errorf("threads named %q used %v, want the spin's CPU (groups %+v)", self, cpu, groups)
	}
}

func readComm(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseSchedstat(t *testing.T) {
	st, err := parseSchedstat("123456789 2000 17\n")
	if err != nil || st.cpu != 123456789 || st.wait != 2000 {
		t.Fatalf("got %+v, %v", st, err)
	}
	for _, bad := range []string{"", "12", "x 1 2", "1 y 2"} {
		if _, err := parseSchedstat(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestThreadsFlags(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run([]string{"threads"}, &out, &errb); err == nil || !strings.Contains(err.Error(), "--pid") {
		t.Fatalf("no pid: %v", err)
	}
	if err := run([]string{"threads", "--pid", strconv.Itoa(os.Getpid()), "--every", "0s"}, &out, &errb); err == nil {
		t.Fatal("zero interval: want an error")
	}
	out.Reset()
	printGroups(&out, 10*time.Second, []threadGroup{{name: "MergeMutate", threads: 2, cpu: time.Second, wait: 250 * time.Millisecond}})
	if got := out.String(); !strings.Contains(got, "wait/cpu") || !strings.Contains(got, "MergeMutate") || !strings.Contains(got, "0.25") {
		t.Fatalf("report:\n%s", got)
	}
}
