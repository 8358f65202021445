package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

const threadsUsage = `usage: vcdev threads --pid PID [--every 10s] [--for 60s]

Where a process's CPU goes by thread, and how long its threads waited for a
core: from Linux's /proc/PID/task/*/schedstat, summed per thread name. A Go
program's threads carry the program's name; chDB names its own
(MergeMutate for merges, QueryPipelineEx and ThreadPool for queries and
inserts, BgSchPool for background tasks). "wait" is time a thread was
runnable and queued for a core: on a machine with spare cores it stays
near zero; when it grows for the Go threads, requests are waiting for the
CPU that other threads hold (docs/benchmarks/method.md, "Where the tail
comes from").

flags:
`

// runThreads samples the threads of a process every interval and prints,
// per thread name, the CPU used and the time spent waiting for a core
// since the previous sample.
func runThreads(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("threads", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, threadsUsage); fs.PrintDefaults() }
	pid := fs.Int("pid", 0, "the process to watch")
	every := fs.Duration("every", 10*time.Second, "print a line per thread name this often")
	total := fs.Duration("for", time.Minute, "stop after this long (0 = until interrupted)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *pid <= 0 {
		fs.Usage()
		return errors.New("threads: --pid is required")
	}
	if *every <= 0 {
		return errors.New("threads: --every must be positive")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *total > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *total)
		defer cancel()
	}
	dir := filepath.Join("/proc", strconv.Itoa(*pid), "task")
	prev, err := readThreads(dir)
	if err != nil {
		return err
	}
	start := time.Now()
	tick := time.NewTicker(*every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		cur, err := readThreads(dir)
		if err != nil {
			return err
		}
		printGroups(stdout, time.Since(start), groupThreads(prev, cur))
		prev = cur
	}
}

// printGroups writes one sample: a header with the time since the start,
// then a line per thread name.
func printGroups(w io.Writer, since time.Duration, groups []threadGroup) {
	fmt.Fprintf(w, "%6.0fs %-18s %7s %9s %9s %8s\n", since.Seconds(), "threads", "count", "cpu s", "wait s", "wait/cpu")
	for _, g := range groups {
		ratio := 0.0
		if g.cpu > 0 {
			ratio = g.wait.Seconds() / g.cpu.Seconds()
		}
		fmt.Fprintf(w, "%6s %-18s %7d %9.3f %9.3f %8.2f\n", "", g.name, g.threads, g.cpu.Seconds(), g.wait.Seconds(), ratio)
	}
}

// threadStat is one thread's counters: its name, the CPU it used and the
// time it waited on a run queue since it started.
type threadStat struct {
	name      string
	cpu, wait time.Duration
}

// readThreads reads every thread of the process whose task directory is
// dir. A thread that ends while it is read is left out.
func readThreads(dir string) (map[int]threadStat, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("threads: %w (Linux only)", err)
	}
	out := make(map[int]threadStat, len(ents))
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, err1 := os.ReadFile(filepath.Join(dir, e.Name(), "comm"))
		sched, err2 := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err1 != nil || err2 != nil {
			continue // the thread ended
		}
		st, err := parseSchedstat(string(sched))
		if err != nil {
			return nil, fmt.Errorf("threads: thread %d: %w", tid, err)
		}
		st.name = strings.TrimSpace(string(comm))
		out[tid] = st
	}
	return out, nil
}

// parseSchedstat reads a task's schedstat line: nanoseconds on a CPU,
// nanoseconds waiting on a run queue, time slices.
func parseSchedstat(s string) (threadStat, error) {
	f := strings.Fields(s)
	if len(f) < 2 {
		return threadStat{}, fmt.Errorf("schedstat %q: want at least two fields", s)
	}
	run, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return threadStat{}, fmt.Errorf("schedstat %q: %w", s, err)
	}
	wait, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return threadStat{}, fmt.Errorf("schedstat %q: %w", s, err)
	}
	return threadStat{cpu: time.Duration(run), wait: time.Duration(wait)}, nil
}

// threadGroup is the threads of one name between two samples.
type threadGroup struct {
	name      string
	threads   int
	cpu, wait time.Duration
}

// groupThreads sums, per thread name, what each thread of cur used since
// prev, most CPU first.
func groupThreads(prev, cur map[int]threadStat) []threadGroup {
	by := map[string]*threadGroup{}
	for tid, c := range cur {
		g := by[c.name]
		if g == nil {
			g = &threadGroup{name: c.name}
			by[c.name] = g
		}
		g.threads++
		// A thread absent from prev started since (its whole use
		// counts); a pool thread renamed for its task counts under the
		// name it has now.
		p := prev[tid]
		g.cpu += max(c.cpu-p.cpu, 0)
		g.wait += max(c.wait-p.wait, 0)
	}
	out := make([]threadGroup, 0, len(by))
	for _, g := range by {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b threadGroup) int {
		return cmp.Or(cmp.Compare(b.cpu, a.cpu), strings.Compare(a.name, b.name))
	})
	return out
}
