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
	start := time.Now()
	spun := make(chan time.Duration)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		t0 := time.Now()
		x := 0
		for time.Since(t0) < 200*time.Millisecond {
			x++
		}
		_ = x
		spun <- time.Since(t0)
	}()
	<-spun
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
	// The spin is on a CPU most of its 200 ms unless the machine is
	// saturated; asserting only a share of it keeps this off the clock.
	if cpu < 20*time.Millisecond {
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
