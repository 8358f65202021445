package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/viewcount/viewcount/rollup/repair"
)

const reconcileUsage = `usage: viewcount reconcile [--from TIME] [--to TIME] [--json] [serve's flags]
  recomputes views and uniques from views_raw and compares every rollup in the
  range (default: all of it); prints the drift per table and day; exits 1 on any.
  On the embedded defaults stop the server first (the data dir is locked).`

// maxDriftRows bounds the differing rows a reconcile lists (it counts all).
const maxDriftRows = 10000

// drift is one table's differing rows within one day.
type drift struct {
	Table        string `json:"table"`
	Window       string `json:"window"` // the UTC day, or "all time" for page_rollup's total rows
	Rows         int    `json:"rows"`
	StoredViews  uint64 `json:"stored_views"`
	RecountViews uint64 `json:"recount_views"`
}

// reconcileReport is what reconcile found.
type reconcileReport struct {
	From      time.Time        `json:"from"`
	To        time.Time        `json:"to"`
	Differing map[string]int64 `json:"differing"` // per table, all of them
	Drift     []drift          `json:"drift"`     // the listed ones by table and day
}

func (r reconcileReport) ok() bool {
	for _, n := range r.Differing {
		if n > 0 {
			return false
		}
	}
	return true
}

// reconcile recounts the rollups' rows in [from, to) from views_raw,
// printing its waits for a rollup feed in flight to progress.
func reconcile(ctx context.Context, q repair.Execer, from, to, now time.Time, progress io.Writer) (reconcileReport, error) {
	rep := reconcileReport{From: from, To: to, Differing: map[string]int64{}, Drift: []drift{}}
	res, err := repair.RecountRange(ctx, q, now, maxDriftRows, from, to, func(line string) { fmt.Fprintln(progress, line) })
	if err != nil {
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	byKey := map[[2]string]*drift{}
	for _, r := range res {
		rep.Differing[r.Table] = int64(r.Differing)
		if r.Differing == 0 {
			continue
		}
		for _, d := range r.Examples {
			w := "all time"
			if d.Grain != "total" && len(d.Bucket) >= 10 {
				w = d.Bucket[:10]
			}
			k := [2]string{d.Table, w}
			if byKey[k] == nil {
				byKey[k] = &drift{Table: d.Table, Window: w}
			}
			byKey[k].Rows++
			byKey[k].StoredViews += d.StoredViews
			byKey[k].RecountViews += d.RecountViews
		}
	}
	for _, d := range byKey {
		rep.Drift = append(rep.Drift, *d)
	}
	sort.Slice(rep.Drift, func(i, j int) bool {
		if rep.Drift[i].Table != rep.Drift[j].Table {
			return rep.Drift[i].Table < rep.Drift[j].Table
		}
		return rep.Drift[i].Window < rep.Drift[j].Window
	})
	return rep, nil
}

func runReconcile(args []string, stdout, stderr io.Writer) error {
	asJSON, args := takeFlag(args, "json")
	fromS, args := takeValue(args, "from")
	toS, args := takeValue(args, "to")
	from, to := time.Unix(0, 0).UTC(), time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	var err error
	if fromS != "" {
		if from, err = parseTime(fromS); err != nil {
			return fmt.Errorf("reconcile: --from: %w", err)
		}
	}
	if toS != "" {
		if to, err = parseTime(toS); err != nil {
			return fmt.Errorf("reconcile: --to: %w", err)
		}
	}
	if !from.Before(to) {
		return fmt.Errorf("reconcile: --from %s is not before --to %s\n%s", fromS, toS, reconcileUsage)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t, err := openTarget(ctx, "reconcile", args, stderr, false)
	if err != nil {
		return err
	}
	defer t.Close()
	fmt.Fprintln(stderr, "recounting every rollup from views_raw …")
	rep, err := reconcile(ctx, t.store, from, to, time.Now(), stderr)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printReconcile(stdout, rep)
	}
	if !rep.ok() {
		return fmt.Errorf("reconcile: rollups drift from views_raw (`viewcount repair rollups` rebuilds them)")
	}
	return nil
}

func printReconcile(w io.Writer, rep reconcileReport) {
	tables := make([]string, 0, len(rep.Differing))
	for t, n := range rep.Differing {
		tables = append(tables, fmt.Sprintf("%s %d", t, n))
	}
	sort.Strings(tables)
	fmt.Fprintf(w, "rows differing from views_raw: %s\n", strings.Join(tables, ", "))
	if len(rep.Drift) == 0 {
		fmt.Fprintln(w, "ok: no drift")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tWINDOW\tROWS\tSTORED VIEWS\tRECOUNT VIEWS")
	for _, d := range rep.Drift {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\n", d.Table, d.Window, d.Rows, d.StoredViews, d.RecountViews)
	}
	_ = tw.Flush()
}

// takeValue removes the flag name and its value (--name V, --name=V) from
// args, so the rest parse as serve's flags.
func takeValue(args []string, name string) (string, []string) {
	val := ""
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-"+name || a == "--"+name) && i+1 < len(args):
			val = args[i+1]
			i++
		case strings.HasPrefix(a, "-"+name+"=") || strings.HasPrefix(a, "--"+name+"="):
			_, val, _ = strings.Cut(a, "=")
		default:
			rest = append(rest, a)
		}
	}
	return val, rest
}
