package viewcount

import (
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
)

// Health is the state of each part of a process that can degrade on its
// own while the process keeps running: the stream accepting writes, the
// store accepting inserts, each validator partition making progress, the
// pipeline's lag. The part that owns a state reports it (SetHealth); /readyz
// answers 503 naming every failing part and /metrics shows each as a gauge,
// so an operator sees a degradation without reading logs, and sees it clear
// when the fault heals.
//
// Part names are stable identifiers: "stream" (the stream supervisor's
// write probe), "store_parts" (damaged parts), "partition/<p>" and "lag"
// (the validators). /readyz adds its live checks beside them ("store": a
// ping).
type Health struct {
	mu    sync.Mutex
	parts map[string]partHealth
}

type partHealth struct {
	problem string // empty: healthy
	since   time.Time
}

// PartHealth is one part's state as reported.
type PartHealth struct {
	Part    string
	Problem string    // empty when healthy
	Since   time.Time // when the part entered this state
}

// SetHealth records part's state: a nil err means healthy. The error text is
// shown on /readyz, so it must name the cause without visitor data.
func (h *Health) SetHealth(part string, err error) {
	problem := ""
	if err != nil {
		problem = err.Error()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parts == nil {
		h.parts = make(map[string]partHealth)
	}
	old, ok := h.parts[part]
	if ok && old.problem == problem {
		return
	}
	since := time.Now()
	if ok && (old.problem == "") == (problem == "") {
		since = old.since // a new reason for the same state keeps its start
	}
	h.parts[part] = partHealth{problem: problem, since: since}
}

// DropHealth forgets part, e.g. a partition this process no longer owns.
func (h *Health) DropHealth(part string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.parts, part)
}

// HealthParts returns every reported part, sorted by name.
func (h *Health) HealthParts() []PartHealth {
	h.mu.Lock()
	out := make([]PartHealth, 0, len(h.parts))
	for name, p := range h.parts {
		out = append(out, PartHealth{Part: name, Problem: p.problem, Since: p.since})
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Part < out[j].Part })
	return out
}

// Failing returns the failing parts and their problems; empty when all are
// healthy.
func (h *Health) Failing() map[string]string {
	out := map[string]string{}
	for _, p := range h.HealthParts() {
		if p.Problem != "" {
			out[p.Part] = p.Problem
		}
	}
	return out
}

// writeHealth writes one gauge per part: 1 healthy, 0 failing.
func (h *Health) writeHealth(w io.Writer) (int64, error) {
	n, err := fmt.Fprint(w, "# HELP viewcount_healthy Each part's state as /readyz reports it: 1 healthy, 0 failing.\n# TYPE viewcount_healthy gauge\n")
	total := int64(n)
	if err != nil {
		return total, err
	}
	for _, p := range h.HealthParts() {
		v := 1
		if p.Problem != "" {
			v = 0
		}
		n, err := fmt.Fprintf(w, "viewcount_healthy{part=%q} %d\n", p.Part, v)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
