package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/viewcount/viewcount/cmd/vcdev/loadgen"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/validate/judge"
)

// The system tests live under test/, driven by test/apptest through this
// package's exported entry points. What stays here are unit tests of the
// command's own functions and the white-box system tests that reach into
// Main (its stream, its HTTP engine, its revalidator); the helpers below
// are test/apptest's for them.
//
// chDB runs one engine per process: every test shares storetest's engine
// (kept open across restarts of Main) and gets its own database.
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

var dbSeq atomic.Int64

const AdminToken = "test-admin-token"

// Start runs a whole viewcount process (all roles, embedded NATS and
// chDB) on 127.0.0.1:0. data may be reused to restart on the same files.
func Start(t *testing.T, data, db string) *Main {
	t.Helper()
	return StartWith(t, data, db, nil, time.Now)
}

// StartWith is Start with a config tweak and a clock.
func StartWith(t *testing.T, data, db string, tweak func(*Config), now func() time.Time) *Main {
	t.Helper()
	if testing.Short() {
		t.Skip("end to end: the system lane runs it (make test-system)")
	}
	storetest.Open(t) // boots the shared engine and keeps it up
	var cfg Config
	cfg.Listen, cfg.Data, cfg.Store.DataDir, cfg.Store.Database = "127.0.0.1:0", data, storetest.Dir(), db
	cfg.API.AdminToken, cfg.Stream.Partitions = AdminToken, 4
	// Short timers (production: a 1 s flush and held tick, a 3 s feed, a
	// 10 s public lag), so a test waits on its polling deadline, not on a
	// timer. A test whose assertion depends on a timer's length sets that one.
	cfg.Validate.FlushEvery, cfg.Validate.HeldEvery, cfg.Validate.Feed.Every = Timer, Timer, Timer
	cfg.API.PublicLag = Timer
	cfg.Stream.Retention, cfg.Validate.Rules = 72*time.Hour, judge.Config{DuplicateWindow: 30 * time.Minute}
	// Tests give each visitor its own address through X-Forwarded-For.
	cfg.Ingest.TrustedProxies = []string{"127.0.0.1/32"}
	// Those addresses are made up, and hosting networks announce some
	// of them: tests that judge AS numbers turn the lookup on.
	cfg.Ingest.ASNDB = "off"
	if tweak != nil {
		tweak(&cfg)
	}
	logger := slog.New(slog.NewTextHandler(LogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m := NewMain(cfg, Roles{Ingest: true, Validate: true, API: true}, logger, io.Discard, now)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		m.Close()
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

// Timer is the flush, feed and public-lag interval of end-to-end
// configs.
const Timer = 100 * time.Millisecond

func NewDB() string { return fmt.Sprintf("e2e_%d_%d", os.Getpid(), dbSeq.Add(1)) }

type LogWriter struct{ T *testing.T }

func (w LogWriter) Write(p []byte) (int, error) {
	w.T.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// Client sends hits to one Main.
type Client struct {
	T    *testing.T
	Base string
	HTTP *http.Client
}

func NewClient(t *testing.T, m *Main) *Client {
	return &Client{T: t, Base: "http://" + m.Addr(), HTTP: &http.Client{Timeout: 30 * time.Second}}
}

func (c *Client) Do(req *http.Request) (int, []byte) {
	c.T.Helper()
	// Hits go out as a browser sends them (the header_mismatch rule rejects
	// a browser UA without its headers), unless a test set its own.
	if p := req.URL.Path; (p == "/p.gif" || p == "/v1/events") && req.Header.Get("Accept-Language") == "" {
		loadgen.SetBrowserHeaders(req.Header, req.UserAgent(), req.Method == http.MethodPost)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func (c *Client) AddSite(domain string) string {
	c.T.Helper()
	req, _ := http.NewRequest("POST", c.Base+"/v1/admin/sites", strings.NewReader(`{"domain":"`+domain+`"}`))
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	req.Header.Set("Content-Type", "application/json")
	code, body := c.Do(req)
	if code != http.StatusCreated {
		c.T.Fatalf("add site: %d %s", code, body)
	}
	var out struct{ Site, Token string }
	if err := json.Unmarshal(body, &out); err != nil || out.Token == "" {
		c.T.Fatalf("add site body %s: %v", body, err)
	}
	return out.Token
}

type Hit struct {
	IP, UA, Site, Page, ID string
	Webdriver              bool
	Beacon                 bool
}

func (c *Client) Send(h Hit) int {
	c.T.Helper()
	var req *http.Request
	if h.Beacon {
		// What vc.js reports from a real browser on a plain-HTTP page.
		hints := map[string]any{"sw": 1920, "sh": 1080, "lang": 2, "tz": true, "uad": false, "sec": false}
		ev := map[string]any{"site": h.Site, "page": h.Page, "webdriver": h.Webdriver, "hints": hints}
		if h.ID != "" {
			ev["id"] = h.ID
		}
		b, _ := json.Marshal(ev)
		req, _ = http.NewRequest("POST", c.Base+"/v1/events", bytes.NewReader(b))
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	} else {
		q := url.Values{"site": {h.Site}, "page": {h.Page}}
		if h.ID != "" {
			q.Set("id", h.ID)
		}
		req, _ = http.NewRequest("GET", c.Base+"/p.gif?"+q.Encode(), nil)
	}
	req.Header.Set("X-Forwarded-For", h.IP)
	if h.UA != "" {
		req.Header.Set("User-Agent", h.UA)
	} else {
		req.Header["User-Agent"] = []string{""}
	}
	code, _ := c.Do(req)
	return code
}

type CountBody struct {
	Site    string `json:"site"`
	Page    string `json:"page"`
	Views   uint64 `json:"views"`
	Uniques uint64 `json:"uniques"`
	AsOf    string `json:"as_of"`
	Pending uint64 `json:"pending"`
}

func (c *Client) Count(site, page string) (int, CountBody, http.Header) {
	c.T.Helper()
	req, _ := http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/count?page="+url.QueryEscape(page), nil)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	var out CountBody
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, resp.Header
}

// Eventually polls f until it returns "" or the deadline passes.
func Eventually(t *testing.T, d time.Duration, f func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		msg := f()
		if msg == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not reached within %s: %s", d, msg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Reasons reads views_raw's row count per verdict for site.
func Reasons(t *testing.T, m *Main, site string) map[string]uint64 {
	t.Helper()
	res, err := m.store.Query(context.Background(), queries.Text("reasons"), store.Params{"site": site})
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

func TestParsePartitions(t *testing.T) {
	f := func(in string, n int, want string) {
		t.Helper()
		got, err := parsePartitions(in, n)
		if s := fmt.Sprint(got); err != nil && want != "error" || err == nil && s != want {
			t.Errorf("parsePartitions(%q, %d) = %v, %v; want %s", in, n, got, err, want)
		}
	}
	f("0-3,6", 8, "[0 1 2 3 6]")
	f("7", 8, "[7]")
	f("1,1,0-1", 8, "[1 0]")
	f("8", 8, "error")
	f("3-1", 8, "error")
	f("a", 8, "error")
	f("-1", 8, "error")
}

func TestFlagsForThroughput(t *testing.T) {
	c, err := ParseConfig("serve", []string{"--window-keys", "9000000", "--flush-every", "2s", "--pprof-listen", "127.0.0.1:6060"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Validate.Rules.MaxKeys != 9_000_000 || c.Validate.FlushEvery != 2*time.Second || c.PprofListen != "127.0.0.1:6060" {
		t.Errorf("parsed %d, %s, %q", c.Validate.Rules.MaxKeys, c.Validate.FlushEvery, c.PprofListen)
	}
	// Unset, the partition count is the stream's; an owned list is checked
	// against it once the stream is open, not here.
	c, err = ParseConfig("validate", []string{"--validate-partitions", "0-7"})
	if err != nil || c.Stream.Partitions != 0 || len(c.Validate.Partitions) != 8 {
		t.Errorf("unset partitions: %v, %d, %v", err, c.Stream.Partitions, c.Validate.Partitions)
	}
	if _, err := ParseConfig("validate", []string{"--partitions", "4", "--validate-partitions", "0-7"}); err == nil {
		t.Error("partitions 4 accepted an owned partition 7")
	}
}

const (
	ChromeUA  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	FirefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0"
)

// VisitorIP gives visitor i its own address in its own /24, as
// test/apptest's does.
func VisitorIP(i int) string { return fmt.Sprintf("203.%d.%d.9", i/250, i%250) }
