package e2e

import (
	"bytes"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/examples"
	"github.com/viewcount/viewcount/test/apptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every analyst example runs as sql/README.md says to run it: `viewcount
// sql --file … --param …` through the read-only listener, with the admin
// token. The examples' answers are checked in package sql/examples (TestExampleAnswers);
// this proves the read-only connection and its statement checks let each
// one through, comment header and parameters included.
func TestSQLExamplesThroughListener(t *testing.T) {
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.SQL.Listen = "127.0.0.1:0" }, time.Now)
	params := []string{"--param", "site=a.example", "--param", "page=/", "--param", "from=2026-03-01",
		"--param", "to=2026-03-02", "--param", "tz=Europe/Berlin"}
	for _, name := range examples.Names() {
		var out bytes.Buffer
		args := append([]string{"sql", "--file", filepath.Join("..", "..", "sql", "examples", name+".sql"),
			"--server", "http://" + m.SQLAddr(), "--token", apptest.AdminToken, "--format", "csv"}, params...)
		if err := app.Run(args, &out, &out); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if !strings.HasPrefix(lines[0], `"`) {
			t.Errorf("%s: want a CSV header first, got %q", name, out.String())
		}
		// An empty store answers with the header alone, but for the
		// hourly series, which WITH FILL gives every hour of two days.
		want := 1
		if name == "page_hourly" {
			want = 1 + 48
		}
		if len(lines) != want {
			t.Errorf("%s: got %d lines, want %d: %q", name, len(lines), want, out.String())
		}
	}
	var out bytes.Buffer
	if err := app.Run([]string{"sql", "SELECT 1", "--file", "x.sql", "--server", "http://" + m.SQLAddr()}, &out, &out); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("query and --file: %v", err)
	}
	if err := app.Run([]string{"sql", "--file", "x.sql", "--param", "site", "--server", "http://" + m.SQLAddr()}, &out, &out); err == nil || !strings.Contains(err.Error(), "name=value") {
		t.Errorf("--param without =: %v", err)
	}
}
