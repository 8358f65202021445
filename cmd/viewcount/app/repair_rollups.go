package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/migrations"
)

// checkExamples is how many differing rows per rollup check lists.
const checkExamples = 20

// repairRollups runs `viewcount repair rollups [--force]`: every rollup is
// rebuilt from views_raw and its damaged parts dropped. A damaged
// views_raw part means events are gone from the source of truth, and a
// rebuild would take their views out of the counts too: that is reported,
// and the rebuild refused unless --force says the loss is accepted.
func repairRollups(args []string, stdout, stderr io.Writer) error {
	force, args := takeFlag(args, "force")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := openTarget(ctx, "repair rollups", args, stderr, false)
	if err != nil {
		return err
	}
	defer c.Close()
	if c.cfg.Store.DSN != "" {
		fmt.Fprintln(stderr, "repair rollups: against a ClickHouse server: stop every validator (serve, validate) first; views they insert during the rebuild are overwritten by it")
	}
	// The rebuild's scripts are written for the newest schema.
	if err := migrations.Apply(ctx, c.store, c.logger); err != nil {
		return err
	}
	now := time.Now()
	broken, err := repair.BrokenParts(ctx, c.store)
	if err != nil {
		return err
	}
	var raw []repair.DetachedPart // views_raw parts whose events are missing
	for _, p := range repair.Harmful(broken) {
		if p.Table == migrations.RawTable {
			raw = append(raw, p)
		}
	}
	if len(raw) > 0 {
		lost, err := repair.RawLost(ctx, c.store, now)
		if err != nil {
			return err
		}
		writeRawDamage(stdout, raw, lost, c.cfg.Stream.Retention)
		if !force {
			return errors.New("repair rollups: views_raw is damaged; refusing to rebuild the rollups from it without --force (see above)")
		}
		fmt.Fprintln(stdout, "--force: rebuilding anyway; the views above leave the counts for good")
	}

	start := time.Now()
	fmt.Fprintf(stdout, "rebuilding %s from views_raw\n", strings.Join(repair.Rollups(), ", "))
	err = repair.Rebuild(ctx, c.store, repair.RebuildOptions{Now: now, Progress: func(table string, done, total int, rows uint64) {
		fmt.Fprintf(stdout, "  %s: month %d/%d recounted (%d raw rows), %s\n", table, done, total, rows, time.Since(start).Round(time.Second))
	}}, c.logger)
	if err != nil {
		return fmt.Errorf("repair rollups: %w (a table is unchanged until its swap; run the repair again)", err)
	}
	// Rebuild dropped the rollups' damaged parts. Of the others, outdated
	// ones (covered) hold nothing that is missing, and views_raw's harmful
	// ones go only when --force accepted their loss.
	dropped := 0
	for _, p := range broken {
		if repair.IsRollup(p.Table) {
			dropped++
			continue
		}
		if !p.Covered && !(force && p.Table == migrations.RawTable) {
			continue
		}
		if err := repair.DropDetached(ctx, c.store, p); err != nil {
			return fmt.Errorf("repair rollups: %w", err)
		}
		dropped++
	}
	results, err := repair.Recount(ctx, c.store, now, checkExamples)
	if err != nil {
		return fmt.Errorf("repair rollups: verify: %w", err)
	}
	for _, r := range results {
		if r.Differing > 0 {
			return fmt.Errorf("repair rollups: %s still differs from its recount in %d rows after the rebuild (were validators inserting?); run `viewcount check`", r.Table, r.Differing)
		}
	}
	fmt.Fprintf(stdout, "done in %s: %d rollup(s) rebuilt and equal to their recount; %d damaged part(s) dropped\n",
		time.Since(start).Round(time.Millisecond), len(repair.Rollups()), dropped)
	return nil
}

func writeRawDamage(w io.Writer, raw []repair.DetachedPart, lost []repair.Lost, retention time.Duration) {
	fmt.Fprintf(w, "views_raw is damaged: %d part(s) set aside by the engine, their events gone from the source of truth:\n", len(raw))
	for _, p := range raw {
		fmt.Fprintf(w, "  %s (%s, month %s, %d bytes, last written %s)\n", p.Name, p.Reason, p.Partition, p.Bytes, p.Modified)
	}
	if len(lost) == 0 {
		fmt.Fprintln(w, "The rollups count no view that views_raw lacks (the parts held rejected events, or only days the rollups keep by themselves).")
	} else {
		fmt.Fprintln(w, "Valid views the rollups still count but views_raw no longer holds (a rebuild would drop them):")
		for _, l := range lost {
			fmt.Fprintf(w, "  %s: %d of %d\n", l.Site, l.Lost, l.Stored)
		}
	}
	fmt.Fprintf(w, "The stream keeps the last %s of events (--retention): events younger than that are still there (docs/operations.md, Recovery).\n", retention)
	fmt.Fprintln(w, "Without a rebuild the public counts stay as they are; `viewcount repair rollups --force` makes them equal to what views_raw holds now.")
}

// checkReport is what `viewcount check --json` prints.
type checkReport struct {
	OK               bool                   `json:"ok"`
	Problems         []string               `json:"problems"`
	DamagedParts     []repair.DetachedPart  `json:"damaged_parts"` // covered ones included, not problems
	Rollups          []repair.RecountResult `json:"rollups"`
	RawLost          []repair.Lost          `json:"raw_lost"`
	RawRetentionDays int                    `json:"raw_retention_days"`
	// Stored and not yet in the rollups (not a problem: a validator feeds
	// them at its next start, or within --feed-every while it runs).
	UnfedRows uint64 `json:"unfed_rows"`
}

// runCheck runs `viewcount check [--json]`, read-only: damaged store
// parts, every rollup against a recount from views_raw. Exit 1 (an error)
// with the list of problems, else a one-line summary.
func runCheck(args []string, stdout, stderr io.Writer) error {
	asJSON, args := takeFlag(args, "json")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := openTarget(ctx, "check", args, stderr, true)
	if err != nil {
		return err
	}
	defer c.Close()
	rep, err := checkStore(ctx, c.store, time.Now())
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}

	progress, err := checkProgress(ctx, c.conn.JS, c.store, c.conn.Partitions)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	rep.Problems = append(rep.Problems, progress...)

	rep.OK = len(rep.Problems) == 0
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return fmt.Errorf("check: %w", err)
		}
	} else if rep.OK {
		parts := "no damaged store parts"
		if n := len(rep.DamagedParts); n > 0 {
			parts = fmt.Sprintf("%d outdated damaged part(s) set aside with nothing missing (`viewcount repair rollups` deletes them)", n)
		}
		unfed := ""
		if rep.UnfedRows > 0 {
			unfed = fmt.Sprintf(" (%d stored views not fed yet: the next start feeds them)", rep.UnfedRows)
		}
		fmt.Fprintf(stdout, "ok: every rollup (%s) equals its recount from views_raw%s; %s; raw events kept %d days\n",
			strings.Join(repair.Rollups(), ", "), unfed, parts, rep.RawRetentionDays)
	} else {
		writeProblems(stdout, rep)
	}
	if !rep.OK {
		return fmt.Errorf("check: %d problem(s) found", len(rep.Problems))
	}
	return nil
}

// writeProblems prints one line per problem and, under a rollup's, the
// first rows that differ (the JSON has them in "rollups").
func writeProblems(w io.Writer, rep *checkReport) {
	fmt.Fprintf(w, "%d problem(s):\n", len(rep.Problems))
	for _, p := range rep.Problems {
		fmt.Fprintf(w, "- %s\n", p)
		for _, r := range rep.Rollups {
			if r.Differing == 0 || !strings.HasPrefix(p, r.Table+": ") {
				continue
			}
			for _, d := range r.Examples {
				fmt.Fprintf(w, "    %s\n", describeDifference(d))
			}
			if n := uint64(len(r.Examples)); n < r.Differing {
				fmt.Fprintf(w, "    … and %d more\n", r.Differing-n)
			}
		}
	}
}

// describeDifference is one differing row as check prints it, in the
// words of its table: page_rollup's a page's bucket, dim_rollup's a
// dimension's value (and page, for a page's rejected events), page_views'
// a page's day with a checksum of its rows instead of uniques,
// rejected_rollup's a reason's user agent and class in an hour with the
// newest event's time instead of uniques, engagement_rollup's a
// dimension's value in an hour or day with the figures that differ.
func describeDifference(d repair.Difference) string {
	views := fmt.Sprintf("views %d (recount %d)", d.StoredViews, d.RecountViews)
	switch d.Table {
	case migrations.DimRollupTable:
		key := fmt.Sprintf("%s %s %s %q", d.Grain, d.Site, d.Dim, d.Value)
		if d.Page != "" {
			key += fmt.Sprintf(" page %q", d.Page)
		}
		return fmt.Sprintf("%s %s: %s, uniques %d (recount %d)", key, d.Bucket, views, d.StoredUniques, d.RecountUniques)
	case migrations.PageViewsTable:
		return fmt.Sprintf("%s %s %q %s: %s, row checksum %d (recount %d)", d.Grain, d.Site, d.Page, d.Bucket, views, d.StoredChecksum, d.RecountChecksum)
	case migrations.RejectedRollupTable:
		key := fmt.Sprintf("%s %s %s ua %q (%s · %s)", d.Grain, d.Site, d.Dim, d.Value, d.Browser, d.Device)
		if d.ASN != 0 {
			key += fmt.Sprintf(" AS%d", d.ASN)
		}
		if d.Origin != "" {
			key += fmt.Sprintf(" from %q", d.Origin)
		}
		return fmt.Sprintf("%s %s: events %d (recount %d), newest %s (recount %s)", key, d.Bucket, d.StoredViews, d.RecountViews, d.StoredLast, d.RecountLast)
	case migrations.EngagementRollupTable:
		return fmt.Sprintf("%s %s %s %q %s: %s", d.Grain, d.Site, d.Dim, d.Value, d.Bucket, describeFigures(d.StoredFigures, d.RecountFigures))
	}
	return fmt.Sprintf("%s %s %q %s: %s, uniques %d (recount %d)", d.Grain, d.Site, d.Page, d.Bucket, views, d.StoredUniques, d.RecountUniques)
}

// checkStore gathers the store's problems, each a readable line.
func checkStore(ctx context.Context, s repair.Execer, now time.Time) (*checkReport, error) {
	rep := &checkReport{Problems: []string{}, RawLost: []repair.Lost{}}
	var err error
	if rep.RawRetentionDays, err = migrations.RawRetentionDays(ctx, s); err != nil {
		return nil, err
	}
	if rep.DamagedParts, err = repair.BrokenParts(ctx, s); err != nil {
		return nil, err
	}
	rawDamaged := false
	for _, p := range repair.Harmful(rep.DamagedParts) {
		rawDamaged = rawDamaged || p.Table == migrations.RawTable
		rep.Problems = append(rep.Problems, fmt.Sprintf("damaged part %s of %s (%s, %d bytes): %s", p.Name, p.Table, p.Reason, p.Bytes, repair.Advice(p.Table)))
	}
	if rep.Rollups, err = repair.Recount(ctx, s, now, checkExamples); err != nil {
		return nil, err
	}
	if rep.UnfedRows, err = feed.Unfed(ctx, s); err != nil {
		return nil, err
	}
	for _, r := range rep.Rollups {
		if r.Differing == 0 {
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %d row(s) differ from the recount of views_raw", r.Table, r.Differing)
		if rawDamaged {
			b.WriteString(" (views_raw is damaged too: see raw_lost before repairing)")
		} else {
			b.WriteString("; repair: `viewcount repair rollups` with the server stopped")
		}
		rep.Problems = append(rep.Problems, b.String())
	}
	if rawDamaged {
		if rep.RawLost, err = repair.RawLost(ctx, s, now); err != nil {
			return nil, err
		}
		for _, l := range rep.RawLost {
			rep.Problems = append(rep.Problems, fmt.Sprintf("views_raw lacks %d of the %d valid views the rollups count for %s", l.Lost, l.Stored, l.Site))
		}
	}
	return rep, nil
}

// describeFigures names engagement_rollup's figures that differ, each
// stored (recount), as "visits 3 (recount 4), engaged_hist {2:1} (recount {2:2})".
func describeFigures(stored, recount *repair.EngagementFigures) string {
	if stored == nil || recount == nil {
		return "figures differ"
	}
	values := func(f *repair.EngagementFigures) map[string]string {
		return map[string]string{"engagements": strconv.FormatInt(f.Engagements, 10), "engaged_ms": strconv.FormatInt(f.EngagedMS, 10),
			"engaged_hist": f.EngagedHist, "scroll_hist": f.ScrollHist, "visits": strconv.FormatInt(f.Visits, 10),
			"bounces": strconv.FormatInt(f.Bounces, 10), "visit_ms": strconv.FormatInt(f.VisitMS, 10),
			"exits": strconv.FormatInt(f.Exits, 10), "rejected": strconv.FormatInt(f.Rejected, 10)}
	}
	s, r := values(stored), values(recount)
	var parts []string
	for _, name := range stored.Differing(*recount) {
		parts = append(parts, fmt.Sprintf("%s %s (recount %s)", name, s[name], r[name]))
	}
	return strings.Join(parts, ", ")
}
