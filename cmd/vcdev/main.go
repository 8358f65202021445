// Command vcdev holds Viewcount's development tools: the load generator the
// benchmarks are measured with (docs/benchmarks/method.md) and the user-agent
// rules' evaluation on public data sets and a probe of what browsers report
// as their window (docs/invalid-traffic.md). They are
// kept out of the production binary, as Prometheus keeps promtool apart:
// the image builds and ships only cmd/viewcount (see the Dockerfile), so
// nothing here runs in production, and a tool may grow without the
// server's binary growing with it.
//
// vcdev never starts a Viewcount role: loadgen talks to a running server
// over HTTP (loopback only unless --allow-remote), ua-eval only reads files,
// window-probe serves pages on loopback to the browser it starts.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
)

const usage = `vcdev: Viewcount's development tools (not in the production binary or the image)

usage:
  vcdev loadgen  [flags]        page-view load against a running server: throughput, latency, lag, memory
  vcdev ua-eval  [--data DIR]   user-agent rules' recall and false positives on public data sets
  vcdev window-probe -- BROWSER  what a browser reports as its window, at script start and first frame
  vcdev threads  --pid PID      a process's CPU and run-queue wait by thread name (Linux)

Run 'vcdev COMMAND -h' for the flags.
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "vcdev:", err)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "loadgen":
		return runLoadgen(rest, stdout, stderr)
	case "ua-eval":
		return runUAEval(rest, stdout, stderr)
	case "window-probe":
		return runWindowProbe(rest, stdout, stderr)
	case "threads":
		return runThreads(rest, stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

// envBool is a boolean variable's value, false when unset.
func envBool(name string) (bool, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", name, v)
	}
	return b, nil
}

// envInt is an integer variable's value, def when unset.
func envInt(name string, def int) (int, error) {
	v, ok := os.LookupEnv(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want a whole number", name, v)
	}
	return n, nil
}
