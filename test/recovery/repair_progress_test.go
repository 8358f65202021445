package recovery

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/internal/progress"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
	"github.com/viewcount/viewcount/validate"
)

// sendHits sends n distinct valid hits, ids prefix-0 to prefix-(n-1).
func sendHits(t *testing.T, c *apptest.Client, site, prefix string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(i), UA: apptest.ChromeUA, Site: site, Page: "/p", ID: fmt.Sprintf("%s-%d", prefix, i)}); code != 200 {
			t.Fatalf("status %d", code)
		}
	}
}

func waitValid(t *testing.T, m *apptest.Server, site string, want uint64) {
	t.Helper()
	apptest.Eventually(t, 60*time.Second, func() string {
		if got := apptest.Reasons(t, m, site); got["valid"] != want || len(got) != 1 {
			return fmt.Sprintf("views_raw by verdict = %v, want %d valid", got, want)
		}
		return ""
	})
}

// TestRepairCommands runs the whole process through both kinds of damaged
// progress (docs/operations.md, Recovery), as an operator meets them: a progress
// record beyond the stream's end makes serve refuse to start, naming
// `repair stream`; missing records make the partitions stop, failing
// /readyz's parts, naming `repair progress`. After each repair the server
// starts, counts new hits, and every hit is counted exactly once.
func TestRepairCommands(t *testing.T) {
	data, db := t.TempDir(), apptest.NewDB()
	const site = "repair.example"
	m := apptest.Start(t, data, db)
	c := apptest.NewClient(t, m)
	c.AddSite(site)
	sendHits(t, c, site, "a", 0, 100)
	waitValid(t, m, site, 100)
	m.Close()

	args := []string{"--data", data, "--store-dir", storetest.Dir(), "--database", db}
	// The damage is done through the stream's own files, as a crash or a
	// lost disk leaves them.
	damage := func(f func(ctx context.Context, conn *stream.Conn)) {
		t.Helper()
		ctx := context.Background()
		conn, err := stream.Open(ctx, stream.Config{DataDir: data}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		f(ctx, conn)
	}

	// Records lost: every partition with rows stops, naming the repair.
	damage(func(ctx context.Context, conn *stream.Conn) {
		kv, err := conn.KV(ctx, viewcount.BucketRollup)
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < conn.Partitions; p++ {
			_ = kv.Delete(ctx, progress.Key(p))
		}
	})
	m = apptest.Start(t, data, db)
	apptest.Eventually(t, 30*time.Second, func() string {
		f := m.Metrics.Failing()
		for part, why := range f {
			if strings.HasPrefix(part, "partition/") && strings.Contains(why, validate.CmdRepairProgress) {
				return ""
			}
		}
		return fmt.Sprintf("failing parts %v, want a partition naming %s", f, validate.CmdRepairProgress)
	})
	resp, err := http.Get("http://" + m.Addr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), validate.CmdRepairProgress) {
		t.Errorf("/readyz while partitions refuse: %d %s", resp.StatusCode, body)
	}
	waitValid(t, m, site, 100) // nothing counted twice
	m.Close()
	var out bytes.Buffer
	if err := app.Run(append([]string{"repair", "progress", "--dry-run"}, args...), &out, io.Discard); err != nil || !strings.Contains(out.String(), "would set partition") {
		t.Fatalf("dry run: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := app.Run(append([]string{"repair", "progress"}, args...), &out, io.Discard); err != nil || !strings.Contains(out.String(), "set partition") {
		t.Fatalf("repair progress: %v\n%s", err, out.String())
	}
	t.Logf("repair progress:\n%s", out.String())

	m = apptest.Start(t, data, db)
	c = apptest.NewClient(t, m)
	sendHits(t, c, site, "b", 100, 50)
	waitValid(t, m, site, 150)
	m.Close()

	// The stream lost its tail: a record beyond its end. Serve refuses.
	damage(func(ctx context.Context, conn *stream.Conn) {
		kv, err := conn.KV(ctx, viewcount.BucketRollup)
		if err != nil {
			t.Fatal(err)
		}
		if err := progress.Write(ctx, kv, 0, 1_000_000); err != nil {
			t.Fatal(err)
		}
	})
	storetest.Open(t)
	cfg := app.Config{Listen: "127.0.0.1:0", Data: data}
	cfg.Store.DataDir, cfg.Store.Database = storetest.Dir(), db
	cfg.API.PublicLag, cfg.API.AdminToken, cfg.Stream.Partitions, cfg.Stream.Retention = time.Second, apptest.AdminToken, 4, 72*time.Hour
	refused := app.NewMain(cfg, app.Roles{Ingest: true, Validate: true, API: true}, slog.New(slog.DiscardHandler), io.Discard, time.Now)
	err = refused.Run(context.Background())
	refused.Close()
	if err == nil || !strings.Contains(err.Error(), validate.CmdRepairStream) {
		t.Fatalf("serve on a stream behind its progress: %v, want an error naming %s", err, validate.CmdRepairStream)
	}
	out.Reset()
	if err := app.Run(append([]string{"repair", "stream"}, args...), &out, io.Discard); err != nil {
		t.Fatalf("repair stream: %v\n%s", err, out.String())
	}
	t.Logf("repair stream:\n%s", out.String())

	m = apptest.Start(t, data, db)
	c = apptest.NewClient(t, m)
	sendHits(t, c, site, "c", 150, 50)
	waitValid(t, m, site, 200)
	if f := m.Metrics.Failing(); len(f) != 0 {
		t.Errorf("failing after the repairs: %v", f)
	}
}
