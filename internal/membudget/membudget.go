// Package membudget splits one process's memory budget (--memory-budget)
// among the parts of it that hold memory: the Go runtime (GOMEMLIMIT), the
// embedded ClickHouse engine (its memory limit and caches), the
// validators' bounded tables, and the stats API's answer cache.
//
// A budget is the process's resident memory, the number an operator sees
// in top or a container's limit. Part of it is not ours to size: the pages
// of code the process runs, mostly libchdb.so's, which stay resident once
// touched (Code). The rest, the data share, is split by fixed fractions
// measured at sustained load (docs/operations.md, "Memory budget"), each
// enforced by the part that holds it. Go's share is a soft limit: it holds
// while Go's live heap is well under it, which is what the traffic a
// budget is sized for gives (about 1 GiB per 10k views/s on two cores).
package membudget

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

const (
	MiB = 1 << 20
	GiB = 1 << 30

	// Code is what the process's code keeps resident: libchdb.so's pages
	// touched by inserts, merges, rollup feeds and stats reads (~205 MiB
	// after a 20k/s run with dashboard reads) and the binary's own (~43
	// MiB). It is file-backed, so the kernel could drop it, but it counts
	// in the resident set like any page.
	Code = 256 * MiB
	// Min is the smallest budget: the code, the engine's floor and a Go
	// share that ingests a few thousand views a second.
	Min = 512 * MiB
	// DefaultMax is the default budget on a machine with room to spare:
	// what a 20k views/s load (the 2-core box's half load) keeps up in,
	// flat at 1.2-1.3 GiB; at 1 GiB that load outgrows Go's share and the
	// collector runs back to back (docs/operations.md, "Memory budget").
	DefaultMax = 1536 * MiB
	// engineFloor is the least the embedded engine gets. Its tracked
	// memory follows the rollup feed's batch: ~220 MiB at peaks at 20k
	// views/s, far less at a few thousand; an engine short of it fails
	// inserts and feeds (retried, nothing lost) until it has it.
	engineFloor = 128 * MiB

	// Sizes per entry of the validators' tables, from a heap profile at
	// 20k views/s (/debug/pprof/heap, inuse_space, divided by the entries
	// each table held): a held view is its packed verdict and its strings
	// in the queue's arena (validate.TestHeldBytes: ~640 bytes for a
	// pixel view), with the slack of both doubling as they grow; a visit its
	// struct, its map slot and the entry page, referrer and campaign
	// strings it keeps alive. The validators estimate what they hold with
	// the same figures (judge.Stats.Bytes, TestStatsBytes).
	WindowKeyBytes = 16  // a slot of a duplicate window's table
	HeldBytes      = 800 // a view held for settling
	OpenViewBytes  = 115 // a counted view an engagement report may still name
	VisitBytes     = 520 // a live visit
)

// Plan is a budget split into the ceilings the process applies. Byte
// counts are what each part may hold; the validator's are also given as
// the table sizes that hold that much, for the whole process (a validator
// splits them among its partitions).
type Plan struct {
	Budget int64 // the whole: resident memory the process stays under
	Code   int64 // resident code, not sized by us (Code)

	// Go is the Go runtime's soft limit (runtime/debug.SetMemoryLimit, as
	// GOMEMLIMIT): its heap, stacks and metadata together. The validator's
	// tables, the stats cache and the embedded NATS server's buffers live
	// in it.
	Go int64
	// Engine is the embedded engine's ceiling (max_server_memory_usage),
	// its caches included: MarkCache for the marks stats reads use, Caches
	// for each other cache.
	Engine, MarkCache, Caches int64

	// Validator is the part of Go the validators' tables take when full,
	// StatsCache the stats API's answers.
	Validator, StatsCache int64
	// The validators' tables, whole process (see judge.Config).
	WindowKeys, MaxHeld, MaxOpenViews, MaxVisits int
}

// Split divides budget, for a process with the embedded engine or without
// (a ClickHouse server stores its views: Go gets the engine's share). It
// fails for a budget under Min.
//
// The data share (budget - Code) goes 30 % to the engine, at least
// engineFloor, and the rest to Go. Of Go's share the validators' tables
// may fill 35 % and the stats cache 5 %; the other 60 % is what Go needs
// beside them at 20k views/s: the validators' fixed sketches (32 MiB), the
// embedded NATS server's block buffers and message ids (~45 MiB), the
// rollup writer's batch (~27 MiB), requests in flight, and the headroom
// between the live heap and the limit that keeps the collector from
// running back to back (a live heap near GOMEMLIMIT makes Go collect
// continuously, and a 2-core box then stops keeping up with its load).
// The validators' share is split among their tables by what each buys:
// the two duplicate windows 35 % (their horizon is the one that shortens
// with traffic), held views 25 %, live visits 30 %, open views 10 %.
func Split(budget int64, engine bool) (Plan, error) {
	if budget < Min {
		return Plan{}, fmt.Errorf("memory budget %s: want at least %s (%s of it is the code the process runs)", Format(budget), Format(Min), Format(Code))
	}
	data := budget - Code
	p := Plan{Budget: budget, Code: Code}
	if engine {
		p.Engine = max(data*3/10, engineFloor)
		p.MarkCache = p.Engine / 16
		p.Caches = p.Engine / 32
	}
	p.Go = data - p.Engine
	p.Validator = p.Go * 35 / 100
	p.StatsCache = p.Go * 5 / 100
	v := p.Validator
	p.WindowKeys = int(v * 35 / 100 / 2 / WindowKeyBytes)
	p.MaxHeld = int(v * 25 / 100 / HeldBytes)
	p.MaxVisits = int(v * 30 / 100 / VisitBytes)
	p.MaxOpenViews = int(v * 10 / 100 / OpenViewBytes)
	return p, nil
}

// Default is the budget for a machine with machine bytes of memory (0:
// unknown): a quarter of it, at least Min and at most DefaultMax. A
// process beside others on a small machine stays small; one with the
// machine to itself can be given more (--memory-budget).
func Default(machine int64) int64 {
	if machine <= 0 {
		return DefaultMax
	}
	return min(max(machine/4, Min), DefaultMax)
}

// Machine is the memory this process may use: its cgroup's limit when it
// has one (a container), else the machine's. 0 when neither can be read.
func Machine() int64 {
	total := ProcSize("/proc/meminfo", "MemTotal")
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 && (total == 0 || v < total) {
			return v
		}
	}
	return total
}

// ProcSize reads one "Name:   N kB" line of a /proc file (/proc/meminfo,
// /proc/self/status) in bytes; 0 when the file or the line is missing
// (not Linux).
func ProcSize(path, field string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		rest, ok := bytes.CutPrefix(s.Bytes(), []byte(field+":"))
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// Parse reads a size as GOMEMLIMIT writes one: an integer with an optional
// unit B, KiB, MiB, GiB or TiB ("512MiB", "2GiB", "536870912").
func Parse(s string) (int64, error) {
	num, unit := s, ""
	if i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
		num, unit = s[:i], s[i:]
	}
	mult, ok := map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": MiB, "GiB": GiB, "TiB": 1 << 40}[unit]
	if !ok || num == "" {
		return 0, errors.New("want an integer with an optional unit B, KiB, MiB, GiB or TiB, e.g. 512MiB")
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, errors.New("too large")
	}
	return n * mult, nil
}

// Format writes n in the largest unit Parse reads that divides it, else
// in MiB with one decimal.
func Format(n int64) string {
	switch {
	case n%GiB == 0 && n != 0:
		return strconv.FormatInt(n/GiB, 10) + "GiB"
	case n%MiB == 0:
		return strconv.FormatInt(n/MiB, 10) + "MiB"
	}
	return strconv.FormatFloat(float64(n)/MiB, 'f', 1, 64) + "MiB"
}
