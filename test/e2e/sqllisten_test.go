package e2e

import (
	"bytes"
	"encoding/json"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/test/apptest"
	"strings"
	"testing"
	"time"
)

// The whole process serves analysts' SQL on --sql-listen, with tokens from
// `viewcount token`, queried by `viewcount sql`.
func TestSQLListen(t *testing.T) {
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.SQL.Listen = "127.0.0.1:0" }, time.Now)
	apptest.NewClient(t, m).AddSite("a.example")
	api := "http://" + m.Addr()
	t.Setenv("VIEWCOUNT_ADMIN_TOKEN", apptest.AdminToken)
	sqlURL := "http://" + m.SQLAddr()

	var out bytes.Buffer
	if err := app.Run([]string{"token", "add", "--role", "analyst", "--note", "cli test", "--server", api}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var added struct{ ID, Token string }
	if err := json.Unmarshal(out.Bytes(), &added); err != nil || added.Token == "" {
		t.Fatalf("token add: %s %v", out.String(), err)
	}
	out.Reset()
	if err := app.Run([]string{"token", "list", "--server", api}, &out, &out); err != nil || !strings.Contains(out.String(), added.ID+"  analyst") || !strings.Contains(out.String(), "cli test") {
		t.Fatalf("token list: %q %v", out.String(), err)
	}

	sql := func(format, query string) (string, error) {
		var b bytes.Buffer
		err := app.Run([]string{"sql", query, "--server", sqlURL, "--token", added.Token, "--format", format}, &b, &b)
		return b.String(), err
	}
	f := func(format, query, want string) {
		t.Helper()
		if got, err := sql(format, query); err != nil || got != want {
			t.Errorf("sql --format %s %s: got %q, %v; want %q", format, query, got, err, want)
		}
	}
	f("csv", "SELECT count() AS tables FROM system.tables WHERE database = currentDatabase() AND name IN ('views_raw', 'page_rollup', 'dim_rollup', 'page_views')", "\"tables\"\n4\n")
	f("tsv", "SELECT 1 + 1 AS two", "two\n2\n")
	f("json", "SELECT 7 AS n FORMAT JSONEachRow", "{\"n\":7}\n")
	if _, err := sql("csv", "DROP TABLE views_raw"); err == nil || !strings.Contains(err.Error(), "Code: 164.") {
		t.Errorf("DROP: %v", err)
	}

	if err := app.Run([]string{"token", "revoke", added.ID, "--server", api}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if _, err := sql("csv", "SELECT 1"); err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "Code: 516.") {
		t.Errorf("after revoke: %v", err)
	}
}
