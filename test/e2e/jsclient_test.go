package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
)

// The official JavaScript client, pinned as the Makefile's `make jsclient`
// pins it (JSCLIENT_VERSION, JSCLIENT_SHA256).
const (
	jsClientVersion = "1.23.1"
	jsClientSHA256  = "b6ff9583e6ef0aa0c025916343e7727a5499de8b2d3dcd03e9da901e1bbadba9"
)

// jsClient returns the directory of @clickhouse/client in the cache,
// fetching it (npm pack, checksum, untar) on the first run only, so later
// runs need no network.
func jsClient(t *testing.T) string {
	t.Helper()
	dir := viewcount.CacheDir("jsclient", jsClientVersion, "package")
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
		return dir
	}
	for _, tool := range []string{"node", "npm", "tar"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed: skipping the JavaScript client test (CI installs Node)", tool)
		}
	}
	tmp := t.TempDir()
	cmd := exec.Command("npm", "pack", "--silent", "@clickhouse/client@"+jsClientVersion)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm pack @clickhouse/client@%s: %v\n%s", jsClientVersion, err, out)
	}
	tgz := filepath.Join(tmp, "clickhouse-client-"+jsClientVersion+".tgz")
	b, err := os.ReadFile(tgz)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != jsClientSHA256 {
		t.Fatalf("@clickhouse/client %s: sha256 %x, want %s", jsClientVersion, sum, jsClientSHA256)
	}
	if out, err := exec.Command("tar", "-xzf", tgz, "-C", tmp).CombinedOutput(); err != nil {
		t.Fatalf("untar: %v\n%s", err, out)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(tmp, "package"), dir); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	return dir
}

// TestJSClient runs the official JavaScript client against --sql-listen:
// JSON, JSONEachRow and CSV with parameters (gzip-compressed answers, as
// the client asks), a streamed result, an INSERT and a DROP refused with
// ClickHouse's READONLY code, and a wrong password refused with 516. The
// engine prints 64-bit integers unquoted
// (output_format_json_quote_64bit_integers is 0 in ClickHouse 26).
func TestJSClient(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed: skipping the JavaScript client test (CI installs Node)")
	}
	client := jsClient(t)
	db := apptest.NewDB()
	m := apptest.StartWith(t, t.TempDir(), db, func(c *app.Config) { c.SQL.Listen = "127.0.0.1:0" }, time.Now)
	at := time.Now().UTC().Truncate(time.Millisecond)
	view := func(page string, visitor uint64, reason viewcount.Reason, i uint32) viewcount.Verdict {
		return viewcount.Verdict{Event: viewcount.Event{Time: at, Site: "a.example", Page: page, Visitor: visitor}, Reason: reason, Seq: 1, Index: i}
	}
	storetest.Insert(t, m.Store, "js-1", []viewcount.Verdict{
		view("/a", 1, viewcount.Valid, 0), view("/a", 2, viewcount.Valid, 1), view("/a", 1, viewcount.Valid, 2),
		view("/b", 3, viewcount.Valid, 3), view("/b", 4, "bot_ua", 4),
	})
	var out bytes.Buffer
	t.Setenv("VIEWCOUNT_ADMIN_TOKEN", apptest.AdminToken)
	if err := app.Run([]string{"token", "add", "--role", "analyst", "--server", "http://" + m.Addr()}, &out, &out); err != nil {
		t.Fatal(err)
	}
	var added struct{ Token string }
	if err := json.Unmarshal(out.Bytes(), &added); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("testdata", "jsclient.cjs"))
	cmd.Env = append(os.Environ(), "CH_CLIENT="+client, "CH_URL=http://"+m.SQLAddr(), "CH_DB="+db, "CH_TOKEN="+added.Token)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	want := `{"ping":true,` +
		`"json":[{"page":"/a","views":3,"visitors":2},{"page":"/b","views":1,"visitors":1}],` +
		`"jsonEachRow":[{"page":"/a","views":3,"visitors":2},{"page":"/b","views":1,"visitors":1}],` +
		`"csv":"\"page\",\"views\",\"visitors\"\n\"/a\",3,2\n\"/b\",1,1\n",` +
		`"queryId":true,"stream":[0,1,2,3,4],` +
		`"insert":{"code":"164","type":"READONLY"},"drop":{"code":"164","type":"READONLY"},"count":5,` +
		`"auth":{"code":"516","type":"AUTHENTICATION_FAILED"}}` + "\n"
	if string(got) != want {
		t.Errorf("JavaScript client:\n got %s\nwant %s", got, want)
	}
}
