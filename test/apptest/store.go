package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
)

// Reasons reads views_raw's row count per verdict for site.
func Reasons(t *testing.T, m *Server, site string) map[string]uint64 {
	t.Helper()
	res, err := m.Store.Query(context.Background(), queries.Text("reasons"), store.Params{"site": site})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, r := range res.TextRows() {
		var n uint64
		fmt.Sscan(r[1], &n)
		out[r[0]] = n
	}
	return out
}

// Command runs one viewcount command line in-process, as the binary does,
// and returns what it printed.
func Command(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = app.Run(args, &out, &errOut)
	return out.String(), errOut.String(), err
}

// Drift is one table's differing rows within one day, as `viewcount
// reconcile --json` lists them.
type Drift struct {
	Table        string `json:"table"`
	Window       string `json:"window"`
	Rows         int    `json:"rows"`
	StoredViews  uint64 `json:"stored_views"`
	RecountViews uint64 `json:"recount_views"`
}

// ReconcileReport is `viewcount reconcile --json`'s answer.
type ReconcileReport struct {
	From      time.Time        `json:"from"`
	To        time.Time        `json:"to"`
	Differing map[string]int64 `json:"differing"`
	Drift     []Drift          `json:"drift"`
}

// OK reports whether every rollup equals its recount.
func (r ReconcileReport) OK() bool {
	for _, n := range r.Differing {
		if n > 0 {
			return false
		}
	}
	return true
}

// ReconcileFlags are the flags that point a command at m's database while
// m runs: the shared engine, and a data dir of its own, since m holds the
// lock of its own.
func ReconcileFlags(t *testing.T, m *Server) []string {
	return []string{"--data", t.TempDir(), "--store-dir", m.Config.Store.DataDir, "--database", m.Config.Store.Database}
}

// Reconcile runs `viewcount reconcile --json` over [from, to) on m's
// database while m runs. Its error is the command's: drift is one.
func Reconcile(t *testing.T, m *Server, from, to time.Time) (ReconcileReport, error) {
	t.Helper()
	args := append([]string{"reconcile", "--json", "--from", from.UTC().Format(time.RFC3339Nano), "--to", to.UTC().Format(time.RFC3339Nano)}, ReconcileFlags(t, m)...)
	out, errOut, err := Command(args...)
	var rep ReconcileReport
	if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
		return rep, fmt.Errorf("reconcile: %w (%v)\n%s%s", jerr, err, out, errOut)
	}
	return rep, err
}
