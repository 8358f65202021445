//go:build !race

package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream/streamtest"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/validate/judge"
)

// clusterRoles starts role processes against one NATS cluster and one
// store. chDB runs one engine per OS process, so the roles run as separate
// Mains in the test's process: each with its own NATS connection, data dir
// (and lock), metrics and HTTP listener, and its own connections to the
// shared engine, as separate processes would have to a ClickHouse server.
type clusterRoles struct {
	t  *testing.T
	cl *streamtest.Cluster
	db string
}

func (h *clusterRoles) start(name, data string, roles Roles, tweak func(*Config)) *Main {
	h.t.Helper()
	var cfg Config
	cfg.Listen, cfg.Data, cfg.Store.DataDir, cfg.Store.Database = "127.0.0.1:0", data, storetest.Dir(), h.db
	cfg.Stream.URL, cfg.Stream.Replicas, cfg.Stream.Partitions = h.cl.URL(), 3, 4
	cfg.API.PublicLag, cfg.API.AdminToken, cfg.Stream.Retention = Timer, AdminToken, 72*time.Hour
	cfg.Ingest.TrustedProxies, cfg.Ingest.ASNDB, cfg.Ingest.CountryDB = []string{"127.0.0.1/32"}, "off", "off"
	// Settling would hold some views for two minutes; the windows
	// need not be the production size for a few thousand visitors.
	cfg.Validate.Rules = judge.Config{DuplicateWindow: 30 * time.Minute, SettleWindow: -time.Second, MaxKeys: 1 << 16}
	cfg.Validate.FlushEvery, cfg.Validate.HeldEvery = Timer, Timer
	// Under continuous load every feed runs, and each costs ~110 ms of
	// CPU whatever its rows (rollup.FeedConfig): 100 ms feeds of four
	// partitions would want more cores than CI has.
	cfg.Validate.Feed.Every = time.Second
	if tweak != nil {
		tweak(&cfg)
	}
	logger := slog.New(slog.NewTextHandler(LogWriter{h.t}, &slog.HandlerOptions{Level: slog.LevelWarn})).With("role", name)
	m := NewMain(cfg, roles, logger, io.Discard, time.Now)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := m.Run(ctx); err != nil {
		m.Close()
		h.t.Fatalf("start %s: %v", name, err)
	}
	h.t.Cleanup(m.Close)
	h.t.Logf("%s started on node %s", name, m.stream.NC.ConnectedServerName())
	return m
}

// kill stops m as kill -9 stops a process: its NATS connection and its
// store connections go first, so nothing it holds is flushed, recorded or
// released (its partition leases run out by their TTL). Close then only
// stops its goroutines, whose every write fails.
func (m *Main) kill() {
	m.stream.NC.Close()
	if m.store != nil {
		_ = m.store.Close()
	}
	m.Close()
}

// TestNATSClusterKills is the cluster's fault test: a 3-node NATS cluster
// (the stream and every bucket with 3 replicas), 2 ingest, 2 validate and
// an api process. Load goes through both ingest processes; mid-run one
// validator and one NATS node (see pickVictim) are killed, then both come
// back. Every acknowledged hit must be counted exactly
// once: through the api, in views_raw, and by `viewcount check`.
func TestNATSClusterKills(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-node NATS cluster under load, with kills")
	}
	began := time.Now()
	storetest.Open(t)
	cl := streamtest.StartCluster(t, 3)
	t.Logf("cluster ready in %s", time.Since(began).Round(time.Millisecond))
	h := &clusterRoles{t: t, cl: cl, db: NewDB()}
	const site = "cluster.example.com"

	api := h.start("api", t.TempDir(), Roles{API: true}, nil)
	apic := NewClient(t, api)
	apic.AddSite(site)
	owner := leaseOwners(t, cl.URL())
	v1Dir := t.TempDir()
	ownFirst := func(c *Config) { c.Validate.Partitions = []int{0, 1} }
	v1 := h.start("validate-1", v1Dir, Roles{Validate: true}, ownFirst)
	Eventually(t, 30*time.Second, func() string {
		if owner(0) == "" || owner(1) == "" {
			return "validate-1 holds no lease on partitions 0-1"
		}
		return ""
	})
	v1Owner := owner(0)
	// validate-2 may validate every partition: it takes 2-3 and waits
	// for 0-1, which validate-1 holds.
	v2 := h.start("validate-2", t.TempDir(), Roles{Validate: true}, nil)
	Eventually(t, 30*time.Second, func() string {
		if o := owner(2); o == "" || o == v1Owner || owner(3) != o {
			return "validate-2 holds no lease on partitions 2-3"
		}
		return ""
	})
	ingest := []*Main{h.start("ingest-1", t.TempDir(), Roles{Ingest: true}, nil), h.start("ingest-2", t.TempDir(), Roles{Ingest: true}, nil)}
	victim, why := pickVictim(t, cl, v2, ingest)
	t.Logf("node to kill: n%d: %s", victim, why)

	const hits, pages = 3600, 25
	load := startClusterLoad(site, []string{"http://" + ingest[0].Addr(), "http://" + ingest[1].Addr()}, hits, pages, 8, 150, 90*time.Second)
	loadBegan := time.Now()
	Eventually(t, 30*time.Second, func() string {
		if n := load.ackedN.Load(); n < hits/8 {
			return strconv.FormatInt(n, 10) + " hits acknowledged"
		}
		return ""
	})
	var severed []string // roles whose connection the node's death cuts
	roles := map[string]*Main{"api": api, "validate-2": v2, "ingest-1": ingest[0], "ingest-2": ingest[1]}
	for name, m := range roles {
		if cl.Node(m.stream.NC.ConnectedServerName()) == victim {
			severed = append(severed, name)
		}
	}
	killedAt, ackedBefore := time.Now(), load.ackedN.Load()
	v1.kill()
	cl.Stop(victim)
	t.Logf("killed validate-1 and node n%d %s into the load (cutting the connections of %v), %d hits acknowledged",
		victim, killedAt.Sub(loadBegan).Round(time.Millisecond), severed, ackedBefore)
	time.Sleep(3 * time.Second)
	cl.Restart(victim)
	t.Logf("node n%d back and current %s after the kill", victim, time.Since(killedAt).Round(time.Millisecond))
	// Nobody released validate-1's leases: they expire by their TTL and
	// validate-2, waiting for them, takes partitions 0-1 over.
	Eventually(t, 40*time.Second, func() string {
		for p := range 2 {
			if o := owner(p); o == "" || o == v1Owner {
				return "partition " + strconv.Itoa(p) + " not taken over"
			}
		}
		return ""
	})
	t.Logf("validate-2 took partitions 0-1 over %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	// Restarted, validate-1 waits for 0-1 as validate-2 did.
	v1 = h.start("validate-1", v1Dir, Roles{Validate: true}, ownFirst)
	load.wait()
	t.Logf("load: %d hits in %s, %d requests; not acknowledged: %v, transport errors: %v; slowest acknowledgement %s",
		hits, time.Since(loadBegan).Round(time.Millisecond), load.attempts.Load(), load.codes, load.errs, load.slowest.Round(time.Millisecond))
	if len(load.gaveUp) > 0 {
		t.Fatalf("%d hits never acknowledged, e.g. %s", len(load.gaveUp), load.gaveUp[0])
	}
	for _, name := range severed {
		if roles[name].stream.NC.Stats().Reconnects == 0 {
			t.Errorf("%s never reconnected, though its node n%d was stopped", name, victim)
		}
	}

	// Every acknowledged hit counted once, through the api.
	want := uint64(len(load.acked))
	Eventually(t, 60*time.Second, func() string {
		got := siteViews(t, apic, site)
		if got.Views > want {
			t.Fatalf("site count %d, more than the %d hits acknowledged", got.Views, want)
		}
		if got.Views != want {
			return "site count " + strconv.FormatUint(got.Views, 10) + ", want " + strconv.FormatUint(want, 10) + ", views_raw by verdict " + fmt.Sprint(Reasons(t, api, site))
		}
		return ""
	})
	t.Logf("counted %s after the kill", time.Since(killedAt).Round(time.Millisecond))
	// Two hits a visitor, one through each ingest process; the sketch is
	// exact this far (4096).
	if got := siteViews(t, apic, site); got.Uniques != hits/2 {
		t.Errorf("site uniques %d, want %d: the ingest processes disagree on visitor ids", got.Uniques, hits/2)
	}
	Eventually(t, 10*time.Second, func() string { return pageCountsDiffer(t, apic, site, pages, load.perPage) })

	checkRaw(t, api.store, site, load.acked)
	checkStreamReplicas(t, cl.URL())

	// What an operator runs after an incident, with every role stopped.
	for _, m := range append(ingest, v1, v2, api) {
		m.Close()
	}
	var out, errOut bytes.Buffer
	if err := runCheck([]string{"--nats-url", cl.URL(), "--data", t.TempDir(), "--store-dir", storetest.Dir(), "--database", h.db}, &out, &errOut); err != nil {
		t.Fatalf("viewcount check: %v\n%s%s", err, out.String(), errOut.String())
	}
	t.Logf("viewcount check: %s", strings.TrimSpace(out.String()))
	checkStreamReplicas(t, cl.URL()) // check, run without --nats-replicas, kept them
	t.Logf("wall time %s", time.Since(began).Round(time.Millisecond))
}

// pickVictim chooses the NATS node to kill. The hardest case for a
// validator is a node that holds the consumer of one of its partitions
// (an ordered consumer is one copy, on one node) while its own connection
// is to another node: nothing tells the validator but the consumer's
// heartbeats stopping. Of such nodes it prefers one an ingest process
// publishes through; with none, it takes ingest-1's node.
func pickVictim(t *testing.T, cl *streamtest.Cluster, v *Main, ingest []*Main) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := v.stream.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	own := v.stream.NC.ConnectedServerName()
	publishers := map[string]bool{}
	for _, m := range ingest {
		publishers[m.stream.NC.ConnectedServerName()] = true
	}
	victim, why := "", ""
	l := s.ListConsumers(ctx)
	for info := range l.Info() {
		// One filter subject is sent as FilterSubject.
		subject := info.Config.FilterSubject
		if info.Cluster == nil || info.Cluster.Leader == own || (subject != viewcount.Subject(2) && subject != viewcount.Subject(3)) {
			continue
		}
		if victim == "" || publishers[info.Cluster.Leader] && !publishers[victim] {
			victim = info.Cluster.Leader
			why = "it holds the consumer of " + subject + " of validate-2, which is connected to " + own
			if publishers[victim] {
				why += ", and an ingest process publishes through it"
			}
		}
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	if victim == "" {
		return cl.Node(ingest[0].stream.NC.ConnectedServerName()), "ingest-1's node (validate-2's consumers are on its own node " + own + ")"
	}
	return cl.Node(victim), why
}

// leaseOwners returns a reader of partition leases' owners ("" when free)
// through a client of its own.
func leaseOwners(t *testing.T, url string) func(p int) string {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var leases jetstream.KeyValue
	return func(p int) string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if leases == nil {
			if leases, err = js.KeyValue(ctx, viewcount.BucketLeases); err != nil {
				leases = nil
				return ""
			}
		}
		e, err := leases.Get(ctx, "p"+strconv.Itoa(p))
		if err != nil {
			return ""
		}
		return string(e.Value())
	}
}
