package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/api"
	"github.com/viewcount/viewcount/api/dashboard"
	"github.com/viewcount/viewcount/api/stats"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/internal/feed"
	"github.com/viewcount/viewcount/internal/httpserve"
	"github.com/viewcount/viewcount/internal/latency"
	"github.com/viewcount/viewcount/internal/redact"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/rollup/repair"
	"github.com/viewcount/viewcount/sql/migrations"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate"
	"github.com/viewcount/viewcount/validate/judge"
)

// Roles selects what a process runs.
type Roles struct{ Ingest, Validate, API bool }

// Main is one viewcount process: the wiring of the roles, testable end to end
// (tests run it on 127.0.0.1:0 with a temp data dir).
type Main struct {
	cfg     Config
	roles   Roles
	logger  *slog.Logger
	out     io.Writer
	now     func() time.Time
	Metrics *viewcount.Metrics

	stream *stream.Conn
	store  store.Store
	sites  *stream.Sites
	http   *http.Server
	ln     net.Listener
	pprof  *http.Server
	failed chan error
	lock   *dirLock // released last, after the store and the stream are closed

	// One cancel and one wait group per stage, so Close stops them in order.
	pubCancel, valCancel, apiCancel context.CancelFunc
	pubDone, valDone, apiDone       sync.WaitGroup
	httpDone                        sync.WaitGroup
	closeOnce                       sync.Once
	partsCancel                     context.CancelFunc
	validator                       *validate.Validator // when this process validates
	partsDone                       sync.WaitGroup
	engineMemory                    atomic.Int64 // the embedded engine's tracked memory (sampleEngineMemory)
	sql                             *sqlListener // --sql-listen; nil when off
}

// NewMain returns an unstarted process.
func NewMain(cfg Config, roles Roles, logger *slog.Logger, out io.Writer, now func() time.Time) *Main {
	return &Main{cfg: cfg, roles: roles, logger: logger, out: out, now: now, Metrics: viewcount.NewMetricsWith(latency.New()), failed: make(chan error, 4)}
}

// Addr is the HTTP listen address once Run returned.
func (m *Main) Addr() string {
	if m.ln == nil {
		return ""
	}
	return m.ln.Addr().String()
}

// Failed delivers the error of a role that stopped on its own.
func (m *Main) Failed() <-chan error { return m.failed }

// Run starts the roles and returns once the process serves; Close stops it.
func (m *Main) Run(ctx context.Context) error {
	if m.cfg.API.AdminTokenFlag {
		m.logger.Warn(warnTokenFlag)
	}
	m.applyMemoryBudget()
	// The lock comes before anything opens a file in the data dir (see
	// dirLock); a process on a NATS cluster and a ClickHouse server keeps
	// only its admin token there and needs none.
	embeddedStore := m.cfg.Store.DSN == "" && (m.roles.Validate || m.roles.API)
	if m.cfg.Stream.URL == "" || embeddedStore {
		l, err := lockDataDir(m.cfg.Data)
		if err != nil {
			return err
		}
		// A --store-dir elsewhere is not locked here: chDB refuses a second
		// engine on its files by itself, before it writes anything.
		m.lock = l
	} else if err := os.MkdirAll(m.cfg.Data, 0o750); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	var err error
	scfg := m.cfg.Stream
	scfg.DataDir, scfg.Health = m.cfg.Data, m.Metrics
	m.stream, err = stream.Open(ctx, scfg, m.logger)
	if err != nil {
		return err
	}
	if m.roles.Validate || m.roles.API {
		// Only they read the registry; ingest publishes every hit and
		// leaves unknown sites to the validators.
		if m.sites, err = stream.OpenSites(ctx, m.stream, m.now); err != nil {
			return err
		}
	}
	checks := map[string]httpserve.Checker{"stream": m.stream.Ready}
	if m.roles.Validate || m.roles.API {
		m.store, err = store.Open(ctx, m.cfg.Store.Config, m.logger)
		if err != nil {
			return err
		}
		if err := m.migrate(ctx); err != nil {
			return err
		}
		checks["store"] = m.store.Ping
		if err := m.startStoreChecks(ctx); err != nil {
			return err
		}
	}
	if m.cfg.Stream.URL == "" {
		// An embedded stream that lost its tail would give new hits
		// sequences the partitions skip: acknowledged, never counted.
		if err := validate.CheckStreamTail(ctx, m.stream.JS, m.store, m.stream.Partitions); err != nil {
			return err
		}
	}

	engine, err := httpserve.NewEngine(m.cfg.Ingest.TrustedProxies, m.Metrics)
	if err != nil {
		return err
	}
	normPage := func(s string) (string, error) { return ingest.NormalisePage(s, m.cfg.Ingest.KeepQuery, 0) }

	// Loaded once: the api's explainer takes sample requests as ingest does.
	var icfg ingest.Config
	if m.roles.Ingest || m.roles.API {
		if icfg, err = m.ingestConfig(); err != nil {
			return err
		}
	}
	if m.roles.Ingest {
		salts, err := m.stream.KV(ctx, viewcount.BucketSalts)
		if err != nil {
			return err
		}
		pub := ingest.NewPublisher(m.stream.JS, m.stream.Partitions, m.Metrics, m.logger)
		var pctx context.Context
		pctx, m.pubCancel = context.WithCancel(context.WithoutCancel(ctx))
		m.goStage(&m.pubDone, "publisher", func() error { return pub.Run(pctx) })
		limited := icfg
		limited.Limiter = m.clientLimiter()
		h := ingest.New(limited, pub, ingest.NewSalts(salts, rand.Reader, m.logger), m.Metrics, m.logger, m.now)
		h.Routes(engine)
	}
	if m.roles.Validate {
		if err := m.startValidate(ctx); err != nil {
			return err
		}
	}
	if m.roles.API {
		token, err := m.adminToken()
		if err != nil {
			return err
		}
		snap := api.NewSnapshot(m.store, m.cfg.API.PublicLag, 0, m.now, m.logger)
		snap.CountPending(m.pendingCounter().Count)
		snap.CountBy(m.sites.Counting)
		snap.TrackFeeds(func(ctx context.Context) (map[int]feed.Fed, error) { return feed.FedThrough(ctx, m.store) })
		ruleSets, err := m.stream.KV(ctx, viewcount.BucketRules)
		if err != nil {
			return err
		}
		reval, err := m.revalidator()
		if err != nil {
			return err
		}
		expl, err := newExplainer(ctx, m, icfg)
		if err != nil {
			return err
		}
		srv, err := api.New(api.Config{PublicLag: m.cfg.API.PublicLag, AdminToken: token, RuleSets: ruleSets,
			Revalidator: reval, Corrector: corrector{rv: reval, q: m.store}, Explainer: expl}, snap, m.store, m.sites, normPage, m.logger, m.now)
		if err != nil {
			return err
		}
		var actx context.Context
		actx, m.apiCancel = context.WithCancel(context.WithoutCancel(ctx))
		m.goStage(&m.apiDone, "snapshot", func() error { return snap.Run(actx) })
		srv.Routes(engine)
		if err := m.startSQL(ctx, srv, engine, token); err != nil {
			return err
		}
		// The stats API (docs/stats-api.md) reads with the site, admin or
		// share token; the dashboard page is its browser client.
		kinds, err := judge.SourceKinds()
		if err != nil {
			return err
		}
		st, err := stats.New(stats.Config{Store: m.store, Auth: srv.ReadAuth, NormPage: normPage, Lag: snap.Lag, Now: m.now, Logger: m.logger,
			CacheBytes: int64(m.cfg.API.StatsCacheMB) << 20, SourceKinds: kinds,
			Zones: stats.ZoneNames(func(ctx context.Context, site string) (string, error) {
				reg, err := m.sites.Get(ctx, site)
				return reg.Timezone, err
			}, m.logger),
			EngagedAfter: func(_ context.Context, site string) (time.Duration, error) {
				_, after := m.sites.Counting(site)
				return after, nil
			}})
		if err != nil {
			return err
		}
		st.Routes(engine)
		dash, err := dashboard.New()
		if err != nil {
			return err
		}
		dash.EmbedOrigins = func(ctx context.Context, site string) []string {
			s, err := m.sites.Get(ctx, site)
			if err != nil {
				return nil // unknown, or the registry not answering: no frame
			}
			return s.EmbedOrigins
		}
		dash.Routes(engine)
	}
	// Every process answers the probes and /metrics, whatever its roles.
	httpserve.Health(engine, checks, m.Metrics)

	ln, err := net.Listen("tcp", m.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", m.cfg.Listen, err)
	}
	// ReadHeaderTimeout bounds how long a slow (slowloris) connection holds
	// its slot under the caps; idle ones give way when the caps are reached.
	var connState func(net.Conn, http.ConnState)
	if m.ln, connState, err = m.edgeListener(ln); err != nil {
		_ = ln.Close()
		return err
	}
	m.http = &http.Server{Handler: engine, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, ConnState: connState, ErrorLog: redact.NewLogLogger(m.logger.Handler(), slog.LevelWarn)}
	m.goStage(&m.httpDone, "http", func() error {
		if err := m.http.Serve(m.ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return m.startPprof()
}

// startPprof serves the profiler on its own listener, never on the public
// one: profiles expose code paths and timings, and a CPU profile costs the
// process while it runs.
func (m *Main) startPprof() error {
	if m.cfg.PprofListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", m.cfg.PprofListen)
	if err != nil {
		return fmt.Errorf("pprof listen %s: %w", m.cfg.PprofListen, err)
	}
	// Blocking and lock contention are sampled only while the profiler
	// is served: one blocking event in ~10 µs of blocking and one
	// contended lock in 100 cost little, and are what explains a slow
	// request that was not on a CPU (docs/benchmarks/method.md, "Where
	// the tail comes from").
	runtime.SetBlockProfileRate(10_000)
	runtime.SetMutexProfileFraction(100)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	m.pprof = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: redact.NewLogLogger(m.logger.Handler(), slog.LevelWarn)}
	m.logger.Info("pprof serving", "addr", ln.Addr().String())
	m.goStage(&m.httpDone, "pprof", func() error {
		if err := m.pprof.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return nil
}

func (m *Main) startValidate(ctx context.Context) error {
	cfg, err := m.ruleConfig()
	if err != nil {
		return err
	}
	intents, err := m.stream.KV(ctx, viewcount.BucketRollup)
	if err != nil {
		return err
	}
	sink := rollup.NewSink(rollup.Config{Feed: m.cfg.Validate.Feed, Sites: m.sites}, m.store, intents, m.Metrics, m.logger, m.now)
	opts := m.cfg.Validate.Options
	// The process's clock dates the ticks that release held views, as it
	// dates the events: a tick by another clock (ahead of the events' one)
	// would release them before their window passed.
	opts.Raw, opts.Now = m.store, m.now
	v, err := validate.New(cfg, opts, m.stream.JS, m.stream.Partitions, m.sites, validate.SinkOf(sink.Open), m.Metrics, m.logger)
	if err != nil {
		return err
	}
	var vctx context.Context
	vctx, m.valCancel = context.WithCancel(context.WithoutCancel(ctx))
	m.goStage(&m.valDone, "validate", func() error { return v.Run(vctx) })
	m.validator = v
	return nil
}

// ingestConfig is ingest's configuration from the flags, with the
// datacenter ranges, the country and the AS databases loaded, but no rate
// limit (the ingest role adds it; a sample request has none).
func (m *Main) ingestConfig() (ingest.Config, error) {
	icfg := ingest.Config{KeepQuery: m.cfg.Ingest.KeepQuery}
	if len(m.cfg.Ingest.DatacenterLists) > 0 {
		ranges, err := ingest.LoadRanges(m.cfg.Ingest.DatacenterLists...)
		if err != nil {
			return icfg, err
		}
		m.logger.Info("datacenter ranges loaded", "ranges", ranges.Len())
		icfg.Datacenter = ranges
	}
	// Never closed: a handler still running after a timed-out shutdown
	// must not read unmapped memory. The mapping goes with the process,
	// or with the reader once unreachable (maxminddb's cleanup).
	countries, err := openCountries(m.cfg.Ingest.CountryDB, m.logger)
	if err != nil {
		return icfg, err
	}
	icfg.CountryHeader = m.cfg.Ingest.CountryHeader
	if countries != nil {
		icfg.Countries = countries
	}
	asns, err := openASNs(m.cfg.Ingest.ASNDB, m.logger)
	if err != nil {
		return icfg, err
	}
	if asns != nil {
		icfg.ASNs = asns
	}
	return icfg, nil
}

// ruleConfig is the validators' rule configuration: Config.Validate.Rules,
// which the flags set, with the bot and spam files loaded into it. Zero
// fields take judge's defaults; the duplicate windows and the settle hold
// then get the process budgets, split among the partitions this process
// validates (validate.New).
func (m *Main) ruleConfig() (judge.Config, error) {
	cfg := m.cfg.Validate.Rules
	if m.cfg.Validate.BotList != "" {
		patterns, err := judge.LoadPatterns(m.cfg.Validate.BotList)
		if err != nil {
			return cfg, err
		}
		cfg.ExtraBotPatterns = patterns
	}
	if m.cfg.Validate.SpamReferrers != "" {
		hosts, err := judge.LoadHosts(m.cfg.Validate.SpamReferrers)
		if err != nil {
			return cfg, err
		}
		cfg.SpamReferrers = hosts
	}
	return cfg, nil
}

// startStoreChecks applies the raw retention (zero, as in tests that build
// a Config by hand, leaves the store's) and reports damaged store parts:
// once now, so a damaged store is named before the process serves, then
// every minute until Close.
func (m *Main) startStoreChecks(ctx context.Context) error {
	if m.cfg.Store.RawRetention > 0 {
		days := migrations.RetentionDays(m.cfg.Store.RawRetention)
		apply := func() error { return migrations.ApplyRawRetention(ctx, m.store, days, m.logger) }
		if m.cfg.Store.Cluster != "" {
			apply = func() error {
				return migrations.ApplyRawRetentionCluster(ctx, m.store, m.cfg.Store.Cluster, days, m.logger)
			}
		}
		if err := apply(); err != nil {
			return err
		}
	}
	parts := repair.NewPartsMonitor(m.store, m.Metrics, time.Minute, m.logger)
	if err := parts.Check(ctx); err != nil {
		return fmt.Errorf("check store parts: %w", err)
	}
	var pctx context.Context
	pctx, m.partsCancel = context.WithCancel(context.WithoutCancel(ctx))
	m.goStage(&m.partsDone, "store parts", func() error { return parts.Run(pctx) })
	if m.cfg.Memory.Engine > 0 {
		m.goStage(&m.partsDone, "engine memory", func() error { return m.sampleEngineMemory(pctx, engineMemoryEvery) })
	}
	return nil
}

func (m *Main) goStage(wg *sync.WaitGroup, name string, f func() error) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := f(); err != nil {
			select {
			case m.failed <- fmt.Errorf("%s: %w", name, err):
			default:
			}
		}
	}()
}

// Close stops the process in the order that loses nothing: stop accepting
// HTTP (in-flight hits finish and get their answer) → flush publishes →
// drain validators (their final batch is inserted) → stop the snapshot and
// the store part checks → close the store and the stream.
func (m *Main) Close() {
	m.closeOnce.Do(func() {
		if m.pprof != nil {
			_ = m.pprof.Close() // a profile in progress is not worth waiting for
		}
		if m.http != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if err := m.http.Shutdown(ctx); err != nil {
				m.logger.Warn("http shutdown", "err", err)
			}
			cancel()
			m.httpDone.Wait()
		}
		m.closeSQL()
		stop := func(cancel context.CancelFunc, wg *sync.WaitGroup) {
			if cancel != nil {
				cancel()
			}
			wg.Wait()
		}
		stop(m.pubCancel, &m.pubDone)
		stop(m.valCancel, &m.valDone)
		stop(m.apiCancel, &m.apiDone)
		stop(m.partsCancel, &m.partsDone)
		if m.sites != nil {
			m.sites.Close()
		}
		if m.store != nil {
			if err := m.store.Close(); err != nil {
				m.logger.Warn("store close", "err", err)
			}
		}
		if m.stream != nil {
			m.stream.Close()
		}
		m.lock.Unlock()
	})
}

// adminToken returns the configured token (--admin-token or its variable,
// else the file --admin-token-file names), or the one stored in the data
// dir, generating and printing it on first start.
func (m *Main) adminToken() (string, error) {
	if m.cfg.API.AdminToken != "" {
		return m.cfg.API.AdminToken, nil
	}
	if m.cfg.API.AdminTokenFile != "" {
		return readTokenFile(m.cfg.API.AdminTokenFile)
	}
	path := filepath.Join(m.cfg.Data, "admin_token")
	b, err := os.ReadFile(path)
	if err == nil {
		if t := strings.TrimSpace(string(b)); t != "" {
			return t, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("admin token: %w", err)
	}
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	token := "vca_" + hex.EncodeToString(raw)
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("admin token: %w", err)
	}
	fmt.Fprintf(m.out, "\nGenerated admin token (stored in %s; shown once):\n\n  %s\n\n", path, token)
	return token, nil
}

// readTokenFile returns the token a file holds (surrounding space
// trimmed); an empty file is an error, never an empty token.
func readTokenFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("admin token file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("admin token file %s: empty", path)
	}
	return t, nil
}

// warnTokenFlag is the warning for an admin token given on a command line.
const warnTokenFlag = "--admin-token on the command line is readable by every local user (ps, /proc/PID/cmdline); use VIEWCOUNT_ADMIN_TOKEN or --admin-token-file"

// migrate brings the store's schema up to date: the migrations on one
// server or chDB, the cluster schema (sql/migrations/cluster) with --cluster.
func (m *Main) migrate(ctx context.Context) error {
	if m.cfg.Store.Cluster != "" {
		return migrations.ApplyCluster(ctx, m.store, m.cfg.Store.Cluster, m.logger)
	}
	return migrations.Apply(ctx, m.store, m.logger)
}

// pendingCounter counts what the public counts do not include yet; held
// views only when this process validates (a lone api process cannot see
// another's).
func (m *Main) pendingCounter() validate.PendingCounter {
	settle := m.cfg.Validate.Rules.SettleWindow
	if settle <= 0 {
		settle = judge.DefaultConfig().SettleWindow
	}
	pc := validate.PendingCounter{JS: m.stream.JS, Store: m.store, Partitions: m.stream.Partitions, Settle: settle}
	if m.validator != nil {
		pc.Held, pc.HeldSince = m.validator.Held, m.validator.HeldSince
	}
	return pc
}
