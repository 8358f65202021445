//go:build faults

package faults

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/store"
)

var (
	//go:embed testdata/valid_ids.sql
	validIDsSQL string
	//go:embed testdata/verdict_counts.sql
	verdictCountsSQL string
	//go:embed testdata/report_rows.sql
	reportRowsSQL string
)

// liveValid reads the site's valid total from the running child's
// invalid-traffic report (the admin token may read any site's).
func liveValid(base, site string) (uint64, error) {
	day := time.Now().UTC()
	q := url.Values{"from": {day.AddDate(0, 0, -1).Format(time.DateOnly)}, "to": {day.AddDate(0, 0, 1).Format(time.DateOnly)}}
	req, _ := http.NewRequest("GET", base+"/v1/sites/"+site+"/invalid?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("invalid report: %d", resp.StatusCode)
	}
	var rep struct {
		Valid uint64 `json:"valid"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return 0, fmt.Errorf("invalid report: %w", err)
	}
	return rep.Valid, nil
}

// waitCounted polls the live valid count until it reaches want, d passes,
// or the count stays the same for stall (0 = no such limit; with the load
// stopped a healthy pipeline never stands still that long); it returns the
// last count seen and whether want was reached.
func waitCounted(c *child, site string, want int, d, stall time.Duration) (uint64, bool) {
	deadline := time.Now().Add(d)
	var last uint64
	lastChange := time.Now()
	for {
		if n, err := liveValid(c.base(), site); err == nil {
			if n != last {
				last, lastChange = n, time.Now()
			}
			if n >= uint64(want) {
				return n, true
			}
		}
		if time.Now().After(deadline) || !c.running() || stall > 0 && time.Since(lastChange) > stall {
			return last, false
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// outcome is what the store holds after a scenario, compared with the
// ids the load had acknowledged.
type outcome struct {
	acknowledged int
	counted      uint64 // valid rows in views_raw
	missing      int    // acknowledged, not valid
	duplicates   uint64 // valid rows beyond the first of an id
	unexpected   int    // valid ids never sent by the load
	// Engagement reports: acknowledged, not stored, and stored with a
	// verdict other than accepted or a repeat (a resent batch's), which
	// the load never earns: it reports only on views it had acknowledged,
	// with no more time than passed since.
	reports, reportsMissing int
	reportsRefused          []string
	rollupDiffs             []string
	verdicts                map[string]uint64
}

func (o outcome) ok() bool {
	return o.missing == 0 && o.duplicates == 0 && o.unexpected == 0 && len(o.rollupDiffs) == 0 &&
		o.reportsMissing == 0 && len(o.reportsRefused) == 0
}

// inspect opens the stopped child's store directly and compares it with
// the load's acknowledged ids, and every rollup with a recount of
// views_raw.
func inspect(ctx context.Context, data, site string, l *load) (outcome, error) {
	var o outcome
	s, err := store.Open(ctx, store.Config{DataDir: data}, nil)
	if err != nil {
		return o, fmt.Errorf("open the child's store: %w", err)
	}
	defer s.Close()
	res, err := s.Query(ctx, validIDsSQL, store.Params{"site": site})
	if err != nil {
		return o, fmt.Errorf("valid ids: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	o.acknowledged = len(l.acked)
	seen := make(map[string]bool, len(res.TextRows()))
	for _, r := range res.TextRows() {
		n, _ := strconv.ParseUint(r[1], 10, 64)
		o.counted += n
		o.duplicates += n - 1
		seen[r[0]] = true
		if l.acked[r[0]] == 0 && !l.gaveUp[r[0]] {
			o.unexpected++
		}
	}
	for id := range l.acked {
		if !seen[id] {
			o.missing++
		}
	}
	if res, err = s.Query(ctx, reportRowsSQL, store.Params{"site": site}); err != nil {
		return o, fmt.Errorf("reports: %w", err)
	}
	stored := map[report]bool{}
	for _, r := range res.TextRows() {
		engaged, _ := strconv.ParseInt(r[1], 10, 64)
		stored[report{r[0], engaged}] = true
		if r[2] != "valid" && r[2] != "engagement_repeat" && len(o.reportsRefused) < 10 {
			o.reportsRefused = append(o.reportsRefused, fmt.Sprintf("%s %dms: %s", r[0], engaged, r[2]))
		}
	}
	o.reports = len(l.reports)
	for rep := range l.reports {
		if !stored[rep] {
			o.reportsMissing++
		}
	}
	// The recount `viewcount check` runs too (repair.Recount): one
	// definition of what the rollups must hold.
	recounts, err := repair.Recount(ctx, s, time.Now(), 20)
	if err != nil {
		return o, fmt.Errorf("rollup recount: %w", err)
	}
	for _, r := range recounts {
		for _, d := range r.Examples {
			o.rollupDiffs = append(o.rollupDiffs, fmt.Sprintf("%+v", d))
		}
	}
	res, err = s.Query(ctx, verdictCountsSQL, store.Params{"site": site})
	if err != nil {
		return o, fmt.Errorf("verdicts: %w", err)
	}
	o.verdicts = map[string]uint64{}
	for _, r := range res.TextRows() {
		o.verdicts[r[0]], _ = strconv.ParseUint(r[1], 10, 64)
	}
	return o, nil
}

// operatorCheck runs `viewcount check --json` on the stopped child's data
// dir, as an operator would after an incident, and returns its problems:
// the suite's own recount and the operator's command must agree that the
// store is sound.
func operatorCheck(ctx context.Context, c *child) ([]string, error) {
	cmd := exec.CommandContext(ctx, c.bin, "check", "--json", "--data", c.data)
	cmd.Env = os.Environ()
	if c.natsURL != "" {
		cmd.Env = append(cmd.Env, "NATS_URL="+c.natsURL)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var rep struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		return nil, fmt.Errorf("viewcount check: %v (%v): %s%s", err, jerr, out, stderr.Bytes())
	}
	if rep.OK != (err == nil) {
		return nil, fmt.Errorf("viewcount check: ok=%v but exit %v", rep.OK, err)
	}
	// And `viewcount reconcile`, which every crash test ends with: no
	// rollup may drift from views_raw.
	cmd = exec.CommandContext(ctx, c.bin, "reconcile", "--json", "--data", c.data)
	cmd.Env = os.Environ()
	stderr.Reset()
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	var drift struct {
		Differing map[string]int64 `json:"differing"`
	}
	if jerr := json.Unmarshal(out, &drift); jerr != nil {
		return nil, fmt.Errorf("viewcount reconcile: %v (%v): %s%s", err, jerr, out, stderr.Bytes())
	}
	for table, n := range drift.Differing {
		if n > 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("reconcile: %s drifts in %d rows", table, n))
		}
	}
	if (len(rep.Problems) == 0) != (err == nil) && rep.OK {
		return nil, fmt.Errorf("viewcount reconcile: no drift reported but exit %v", err)
	}
	return rep.Problems, nil
}
