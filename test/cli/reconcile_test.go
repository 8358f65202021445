package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
)

// TestReconcileDrift: `viewcount reconcile` finds nothing after a clean
// run, and names the table and day of a rollup row that does not follow
// from views_raw, exiting non-zero; --from/--to leave out drift outside
// the range.
func TestReconcileDrift(t *testing.T) {
	data, db := t.TempDir(), apptest.NewDB()
	m := apptest.Start(t, data, db)
	c := apptest.NewClient(t, m)
	c.AddSite("drift.example")
	for i := range 5 {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.ChromeUA, Site: "drift.example", Page: "/d"}); code != http.StatusOK {
			t.Fatalf("hit: %d", code)
		}
	}
	apptest.Eventually(t, time.Minute, func() string {
		if _, b, _ := c.Count("drift.example", "/d"); b.Views != 5 {
			return fmt.Sprintf("%d views", b.Views)
		}
		return ""
	})
	m.Close()
	flags := []string{"--data", data, "--store-dir", storetest.Dir(), "--database", db}
	var out, errOut bytes.Buffer
	if err := run("reconcile", flags, &out, &errOut); err != nil || !strings.Contains(out.String(), "ok: no drift") {
		t.Fatalf("clean store: %v\n%s%s", err, out.String(), errOut.String())
	}

	st, err := store.Open(context.Background(), store.Config{DataDir: storetest.Dir(), Database: db}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Exec(context.Background(), `INSERT INTO page_rollup SELECT 'day', 'drift.example', '/d',
		toDateTime('2026-01-15 00:00:00', 'UTC'), 3, uniqCombined64State(toUInt64(7))`, nil)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err = run("reconcile", flags, &out, &errOut)
	if err == nil || !strings.Contains(out.String(), "page_rollup  2026-01-15  1     3             0") {
		t.Errorf("damaged rollup: %v\n%s", err, out.String())
	}
	out.Reset()
	err = run("reconcile", append(flags, "--from", "2026-02-01"), &out, &errOut)
	if err != nil || !strings.Contains(out.String(), "ok: no drift") {
		t.Errorf("range after the damage: %v\n%s", err, out.String())
	}
}
