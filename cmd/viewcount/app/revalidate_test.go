package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/validate"
)

// sneakyUA is a browser's user agent that nothing in the version-1 rules
// rejects: an older Chrome, which a scraper fleet sends unchanged. Its
// signature is what version 2 adds (--bot-list).
const sneakyUA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/99.0.4844.51 Safari/537.36"

// TestRevalidateV1ToV2 is revalidation end to end: traffic whose bots
// the version-1 rules miss is counted; version 2 adds their signature; a
// revalidation over the range, cut half way through its rebuild and run
// again, leaves the public counts, the breakdowns and views_raw equal to a
// fresh run of version 2 over the same stream, and a reconcile finds no
// drift.
func TestRevalidateV1ToV2(t *testing.T) {
	const site = "reval.example"
	dataA := t.TempDir()
	dbA := NewDB()
	m := Start(t, dataA, dbA)
	c := NewClient(t, m)
	c.AddSite(site)
	start := time.Now().UTC()
	humans, bots := 0, 0
	pages := []string{"/a", "/b", "/c"}
	for i := range 40 {
		ua := ChromeUA
		if i%3 == 1 {
			ua = FirefoxUA
		}
		for j := range 1 + i%3 {
			if code := c.Send(Hit{IP: VisitorIP(i), UA: ua, Site: site, Page: pages[(i+j)%3]}); code != http.StatusOK {
				t.Fatalf("human hit: %d", code)
			}
			humans++
		}
	}
	for i := range 30 {
		if code := c.Send(Hit{IP: VisitorIP(100 + i), UA: sneakyUA, Site: site, Page: pages[i%2]}); code != http.StatusOK {
			t.Fatalf("bot hit: %d", code)
		}
		bots++
	}
	end := time.Now().UTC().Add(time.Second)
	Eventually(t, time.Minute, func() string {
		if r := Reasons(t, m, site); r["valid"] != uint64(humans+bots) {
			return fmt.Sprintf("version 1 verdicts %v, want %d valid (the bots pass)", r, humans+bots)
		}
		return ""
	})
	m.Close()

	// The stream as it is now, for the fresh run of version 2 below.
	dataB := t.TempDir()
	copyDir(t, filepath.Join(dataA, "nats"), filepath.Join(dataB, "nats"))

	botList := filepath.Join(t.TempDir(), "bots.txt")
	if err := os.WriteFile(botList, []byte("# scraper fleet seen on reval.example\nChrome/99.0.4844.51\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	v2 := func(c *Config) { c.Validate.BotList = botList }
	m = StartWith(t, dataA, dbA, v2, time.Now)
	c = NewClient(t, m)

	// A dry run reports and changes nothing.
	dry := revalidateHTTP(t, c, viewcount.RevalidateRequest{Site: site, From: start, To: end, DryRun: true, Who: "test"})
	if dry.Judged != humans+bots || dry.Changed != bots || len(dry.ByReason) != 1 ||
		dry.ByReason[0] != (viewcount.ReasonChange{From: viewcount.Valid, To: viewcount.BotUA, Events: bots}) {
		t.Fatalf("dry run: judged %d changed %d by reason %+v; want %d, %d valid→bot_ua", dry.Judged, dry.Changed, dry.ByReason, humans+bots, bots)
	}
	for _, s := range dry.Sources {
		if s.Source != validate.SourceStream {
			t.Errorf("partition %d read from %s, want the stream (it holds the range)", s.Partition, s.Source)
		}
	}
	if r := Reasons(t, m, site); r["valid"] != uint64(humans+bots) {
		t.Fatalf("dry run changed verdicts: %v", r)
	}
	var printed bytes.Buffer
	if err := printRevalidation(&printed, dry); err != nil {
		t.Fatal(err)
	}
	t.Logf("dry run, as `viewcount revalidate --dry-run` prints it:\n%s", printed.String())

	// Cut while the rollups are rebuilt: the verdicts are rewritten, the
	// rollups not yet.
	rv, err := m.revalidator()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = rv.Revalidate(ctx, viewcount.RevalidateRequest{Site: site, From: start, To: end, Who: "test"}, func(p string) {
		if strings.HasPrefix(p, "rebuilding dim_rollup") {
			cancel()
		}
	})
	cancel()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cut revalidation: %v, want context.Canceled", err)
	}
	if r := Reasons(t, m, site); r["valid"] != uint64(humans) || r["bot_ua"] != uint64(bots) {
		t.Fatalf("after the cut: verdicts %v, want %d valid and %d bot_ua", r, humans, bots)
	}
	// The rerun, through the command line, completes it.
	var out, progress bytes.Buffer
	err = runRevalidate([]string{"--server", "http://" + m.Addr(), "--admin-token", AdminToken, "--site", site,
		"--from", start.Format(time.RFC3339Nano), "--to", end.Format(time.RFC3339Nano), "--who", "test rerun"}, &out, &progress)
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, progress.String())
	}
	if !strings.Contains(out.String(), fmt.Sprintf("%d events judged, 0 verdicts changed", humans+bots)) ||
		!strings.Contains(progress.String(), "rollups rebuilt") {
		t.Errorf("rerun printed:\n%s\nprogress:\n%s", out.String(), progress.String())
	}

	// The fresh run: version 2 over a copy of the same stream, from scratch.
	clearProgress(t, dataB)
	dbB := NewDB()
	mb := StartWith(t, dataB, dbB, v2, time.Now)
	Eventually(t, time.Minute, func() string {
		if r := Reasons(t, mb, site); r["valid"] != uint64(humans) || r["bot_ua"] != uint64(bots) {
			return fmt.Sprintf("fresh run verdicts %v", r)
		}
		return ""
	})
	cb := NewClient(t, mb)
	Eventually(t, time.Minute, func() string {
		for _, p := range pages {
			_, a, _ := c.Count(site, p)
			_, b, _ := cb.Count(site, p)
			if a.Views != b.Views || a.Uniques != b.Uniques {
				return fmt.Sprintf("public count of %s: revalidated %d views %d uniques, fresh %d, %d", p, a.Views, a.Uniques, b.Views, b.Uniques)
			}
		}
		return ""
	})
	for _, q := range []string{
		"SELECT grain, site, page, bucket, sum(views), uniqCombined64Merge(uniques) FROM page_rollup GROUP BY ALL ORDER BY ALL",
		"SELECT grain, site, dim, page, value, bucket, sum(views), uniqCombined64Merge(12)(uniques) FROM dim_rollup GROUP BY ALL ORDER BY ALL",
		"SELECT site, page, time, visitor, browser, country FROM page_views ORDER BY ALL",
		"SELECT site, verdict, time, ua, ua_cut, browser, device, asn, origin, sum(events), max(last) FROM rejected_rollup GROUP BY ALL ORDER BY ALL",
		"SELECT event_id, verdict, rules FROM views_raw ORDER BY ALL",
	} {
		a, err := m.store.Query(context.Background(), q, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := mb.store.Query(context.Background(), q, nil)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(a.TextRows()) != fmt.Sprint(b.TextRows()) || len(a.TextRows()) == 0 {
			t.Errorf("%s:\nrevalidated %d rows %v\nfresh       %d rows %v", q, len(a.TextRows()), a.TextRows(), len(b.TextRows()), b.TextRows())
		}
	}
	rep, err := reconcile(context.Background(), m.store, start.Add(-time.Hour), end.Add(time.Hour), time.Now(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.ok() || len(rep.Differing) != len(repair.Rollups()) {
		t.Errorf("reconcile: %+v", rep)
	}
	// The audit trail: the cut run's last step and the rerun's.
	res, err := m.store.Query(context.Background(), "SELECT who, argMax(state, at) FROM revalidations GROUP BY who ORDER BY who", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.TextRows()); got != "[[test verdicts] [test rerun done]]" {
		t.Errorf("audit trail %s", got)
	}
}

// revalidateHTTP posts a revalidation to the admin API and reads its
// streamed answer.
func revalidateHTTP(t *testing.T, c *Client, r viewcount.RevalidateRequest) viewcount.RevalidateResult {
	t.Helper()
	body, _ := json.Marshal(r)
	req, _ := http.NewRequest(http.MethodPost, c.Base+"/v1/admin/revalidate", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	code, out := c.Do(req)
	if code != http.StatusOK {
		t.Fatalf("revalidate: %d %s", code, out)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	var last struct {
		Result *viewcount.RevalidateResult `json:"result"`
		Error  string                      `json:"error"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil || last.Result == nil {
		t.Fatalf("revalidate answer %s: %v %s", out, err, last.Error)
	}
	return *last.Result
}

// clearProgress removes the partitions' progress records from a copied
// stream, so a Main on it validates everything again.
func clearProgress(t *testing.T, data string) {
	t.Helper()
	ctx := context.Background()
	conn, err := stream.Open(ctx, stream.Config{DataDir: data}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kv, err := conn.KV(ctx, viewcount.BucketRollup)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k := range keys.Keys() {
		if err := kv.Purge(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o750)
		}
		copyFile(t, p, filepath.Join(to, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
