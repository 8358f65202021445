package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest"
)

// analystAttack is the service on embedded defaults with --sql-listen, as
// an attacker holding only an analyst token meets it.
type analystAttack struct {
	t       *testing.T
	m       *Main
	sql     string
	token   string
	data    string
	secrets [][]byte // what no answer may hold: the admin token, the salt
}

func newAnalystAttack(t *testing.T) *analystAttack {
	data := t.TempDir()
	m := StartWith(t, data, NewDB(), func(c *Config) { c.SQL.Listen = "127.0.0.1:0" }, time.Now)
	a := &analystAttack{t: t, m: m, sql: "http://" + m.SQLAddr(), data: data}
	// The admin token where the service keeps one it made itself.
	if err := os.WriteFile(filepath.Join(data, "admin_token"), []byte(AdminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, stderr bytes.Buffer
	t.Setenv("VIEWCOUNT_ADMIN_TOKEN", AdminToken)
	if err := Run([]string{"token", "add", "--role", "analyst", "--server", "http://" + m.Addr()}, &out, &stderr); err != nil {
		t.Fatal(err, stderr.String())
	}
	var added struct{ Token string }
	if err := json.Unmarshal(out.Bytes(), &added); err != nil || added.Token == "" {
		t.Fatalf("token add: %s %v", out.String(), err)
	}
	a.token = added.Token
	kv, err := m.stream.KV(t.Context(), viewcount.BucketSalts)
	if err != nil {
		t.Fatal(err)
	}
	salt, err := ingest.NewSalts(kv, rand.Reader, m.logger).For(t.Context(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a.secrets = [][]byte{[]byte(AdminToken), salt, []byte(hex.EncodeToString(salt))}
	return a
}

// query sends one analyst request, as curl -u "x:$ANALYST" $S/ --data-binary … does.
func (a *analystAttack) query(q string) (int, string, http.Header) {
	a.t.Helper()
	req, err := http.NewRequest(http.MethodPost, a.sql+"/", strings.NewReader(q))
	if err != nil {
		a.t.Fatal(err)
	}
	req.SetBasicAuth("x", a.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, s := range a.secrets {
		if bytes.Contains(b, s) {
			a.t.Fatalf("%q: the answer holds a secret: %.200q", q, b)
		}
	}
	return resp.StatusCode, string(b), resp.Header
}

// refused sends q and wants it refused with code, before any engine ran
// it (nothing written, nothing read).
func (a *analystAttack) refused(q string, code int) {
	a.t.Helper()
	status, body, h := a.query(q)
	if status == http.StatusOK || h.Get("X-ClickHouse-Exception-Code") != fmt.Sprint(code) || !strings.Contains(body, "analyst: ") {
		a.t.Errorf("%q: %d %q (code %s), want refused by the checks with code %d", q, status, body, h.Get("X-ClickHouse-Exception-Code"), code)
	}
}

// The security review's requests, exactly, against the whole service:
// each is refused by the checks, no answer holds the admin token or the
// day's salt, no file is written, the analyst session stays in the store's
// database, and counting goes on while the KILL loop runs.
func TestAnalystAttacks(t *testing.T) {
	a := newAnalystAttack(t)
	m := a.m
	c := NewClient(t, m)
	c.AddSite("a.example")
	out := filepath.Join(t.TempDir(), "written")

	// Finding 1: files read through the scalar file(), relative paths too.
	a.refused("SELECT trimBoth(file('data/admin_token')) FORMAT TSVRaw", 497)
	a.refused("SELECT trimBoth(file('"+filepath.Join(a.data, "admin_token")+"')) FORMAT TSVRaw", 497)
	a.refused("SELECT file('/proc/self/cmdline')", 497)
	a.refused("SELECT file('/proc/self/environ')", 497)
	a.refused("SELECT file('/no/such/path')", 497) // no "Cannot open file" tells what exists
	// Finding 2: writes through INTO OUTFILE, alone and after a statement.
	a.refused("SELECT 'x' INTO OUTFILE '"+out+"'", 164)
	a.refused("SELECT 'x' INTO OUTFILE '"+out+"' APPEND", 164)
	a.refused("SELECT 1; SELECT '#!/bin/sh' UNION ALL SELECT 'echo ran' INTO OUTFILE '"+out+"' TRUNCATE FORMAT TSVRaw", 62)
	a.refused("SELECT getServerSetting('path')", 497)
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("INTO OUTFILE: %s exists (%v)", out, err)
	}
	// Finding 3: nothing after the first ';' runs.
	a.refused("SELECT 1; SELECT * FROM merge('system','^one$')", 62)
	a.refused("SELECT * FROM merge('system','^one$')", 497)
	a.refused("SELECT 1; USE system", 62)
	a.refused("USE system", 164)
	a.refused("SELECT 1; SELECT sleep(3); SELECT sleep(3)", 62)
	if status, body, _ := a.query("SELECT currentDatabase()"); status != 200 || strings.TrimSpace(body) != m.cfg.Store.Database {
		t.Errorf("the analyst session after USE: %d %q, want %s", status, body, m.cfg.Store.Database)
	}
	// Finding 5: the salt's files in the stream's store are files like any.
	salts, _ := filepath.Glob(filepath.Join(a.data, "*", "*", "streams", "KV_"+viewcount.BucketSalts, "msgs", "*"))
	for _, p := range append(salts, filepath.Join(a.data, "jetstream")) {
		a.refused("SELECT hex(file('"+p+"'))", 497)
	}

	// The KILL loop while views arrive: every request is refused, and
	// every view sent during it is counted.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	killed := make(chan int)
	go func() {
		n := 0
		defer func() { killed <- n }()
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.sql+"/", strings.NewReader("SELECT 1; KILL QUERY WHERE query NOT LIKE '%system.processes%' ASYNC"))
			req.SetBasicAuth("x", a.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Error("a KILL QUERY request was answered 200")
				return
			}
			n++
		}
	}()
	const views = 40
	for i := range views {
		if code := c.Send(Hit{IP: VisitorIP(i), UA: FirefoxUA, Site: "a.example", Page: "/p"}); code != http.StatusOK {
			t.Fatalf("hit %d: %d", i, code)
		}
	}
	Eventually(t, time.Minute, func() string {
		if _, b, _ := c.Count("a.example", "/p"); b.Views != views {
			return fmt.Sprintf("views %d, want %d", b.Views, views)
		}
		return ""
	})
	cancel()
	if n := <-killed; n == 0 {
		t.Error("the KILL loop sent nothing")
	}

	// No table an analyst may read holds the salt or the admin token:
	// every one of the store's tables and every catalogue allowed, whole.
	status, body, _ := a.query("SELECT name FROM system.tables WHERE database = currentDatabase() FORMAT TSVRaw")
	if status != 200 {
		t.Fatalf("tables: %d %s", status, body)
	}
	tables := strings.Fields(body)
	for _, st := range []string{"one", "databases", "tables", "columns", "functions", "settings", "formats", "build_options"} {
		tables = append(tables, "system."+st)
	}
	for _, tb := range tables {
		if status, body, _ := a.query("SELECT * FROM " + tb + " FORMAT TSVRaw"); status != 200 {
			t.Errorf("SELECT * FROM %s: %d %.200s", tb, status, body)
		}
	}
}
