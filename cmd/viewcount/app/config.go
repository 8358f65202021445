package app

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/ingest/ratelimit"
	"github.com/viewcount/viewcount/internal/membudget"
	"github.com/viewcount/viewcount/internal/stream"
	"github.com/viewcount/viewcount/rollup"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/validate"
	"github.com/viewcount/viewcount/validate/judge"
)

// Config is everything a role process needs, built from flags, then the
// environment, then defaults (in that order of precedence). The process's
// own settings sit at the top; each role's are grouped under it, as the
// role's own configuration type where one fits, so they pass straight
// through.
type Config struct {
	Listen        string
	PprofListen   string // /debug/pprof listener; empty = none
	Data          string
	LogLevel      string
	MaxConns      int // open HTTP connections in all; 0 = derived from the file limit
	MaxConnsPerIP int // ... from one peer address (trusted proxies exempt); 0 = derived
	// Memory is --memory-budget split among the parts that hold memory
	// (internal/membudget); the zero Plan with --memory-budget off.
	Memory membudget.Plan

	// Stream is the JetStream the events are made durable in. Its DataDir
	// and Health are the process's (Data, its metrics), filled in at Open.
	Stream   stream.Config
	Store    StoreConfig
	Ingest   IngestConfig
	Validate ValidateConfig
	API      APIConfig
	SQL      SQLConfig
}

// StoreConfig is where validated views are written and counted.
type StoreConfig struct {
	// DSN, DataDir (--store-dir: embedded chDB files go under DataDir/chdb;
	// default Data) and Database.
	store.Config
	Cluster      string        // ClickHouse cluster the schema goes on (sql/migrations/cluster); "" = one server
	RawRetention time.Duration // how long views_raw keeps events (a TTL); rollups keep counts for good
}

// IngestConfig is what the ingest role takes from a request and adds to it.
type IngestConfig struct {
	TrustedProxies  []string
	ClientRate      int // ingest requests per second per client address; 0 = default, negative = off
	KeepQuery       bool
	DatacenterLists []string
	CountryHeader   string // request header a trusted CDN sets to the client's country; "" = none
	CountryDB       string // MMDB country database; "" = the default (geo.DefaultPath), "off" = none
	ASNDB           string // AS-number data directory; "" = the default (asn.DefaultPath), "off" = none
}

// ValidateConfig is how the validators judge views and hand them on.
type ValidateConfig struct {
	// Partitions (--validate-partitions; nil = all), FlushEvery, MaxLag
	// (--ready-max-lag: /readyz fails "lag" beyond it) and HeldEvery; Raw
	// and Now are the process's, filled in at start.
	validate.Options
	// Rules is the rule configuration, which the rule flags set directly;
	// a zero field takes judge's default, and the duplicate windows and
	// the settle hold get the process budgets (validate.New).
	Rules         judge.Config
	BotList       string // a file of extra bot patterns, loaded into Rules at start
	SpamReferrers string // a file of referrer-spam hosts, loaded into Rules at start
	// Feed is how the validators' sink feeds stored views to the rollups.
	Feed rollup.FeedConfig
}

// APIConfig is the admin and public API's.
type APIConfig struct {
	PublicLag      time.Duration
	AdminToken     string
	AdminTokenFile string // a file holding the admin token (a Docker or systemd secret)
	// AdminTokenFlag: the admin token came from --admin-token on the
	// command line, which every local user can read (/proc/PID/cmdline,
	// ps); Run warns.
	AdminTokenFlag bool
	StatsCacheMB   int // the stats API's answer cache in MiB; 0 = none
}

// SQLConfig is the analysts' read-only SQL listener (ClickHouse's HTTP
// interface) and the limits the engine holds each of its queries to.
type SQLConfig struct {
	Listen           string // "" = off
	Upstream         string // with CLICKHOUSE_DSN: the server's HTTP URL as the analyst user
	MaxExecutionTime time.Duration
	MaxResultRows    int
	MaxMemoryMB      int
}

// envFlag declares a flag whose default comes from an environment variable,
// so a flag given on the command line wins, the variable comes second and
// the built-in default last. It records each flag (specs, by section) for
// `viewcount docs flags`.
type envFlag struct {
	fs  *flag.FlagSet
	err error
	// lookup reads the environment (os.LookupEnv); nil reads none, so the
	// defaults are the built-in ones whatever the machine has set.
	lookup   func(string) (string, bool)
	sections []flagSection
}

// flagSection is a group of flags in the order declared, for the docs.
type flagSection struct {
	Title, Intro string
	Flags        []flagSpec
}

// flagSpec is one flag as documented: its built-in default (never the
// environment's), formatted as it is given.
type flagSpec struct {
	Name, Env, Kind, Default, Usage string
}

func (e *envFlag) env(name string) (string, bool) {
	if e.lookup == nil {
		return "", false
	}
	return e.lookup(name)
}

// section starts a group of flags in the docs.
func (e *envFlag) section(title, intro string) {
	e.sections = append(e.sections, flagSection{Title: title, Intro: intro})
}

func (e *envFlag) record(name, env, kind, def, usage string) {
	if len(e.sections) == 0 {
		e.section("Flags", "")
	}
	s := &e.sections[len(e.sections)-1]
	s.Flags = append(s.Flags, flagSpec{Name: name, Env: env, Kind: kind, Default: def, Usage: usage})
}

func (e *envFlag) str(p *string, name, env, def, usage string) {
	e.record(name, env, "string", def, usage)
	if v, ok := e.env(env); ok {
		def = v
	}
	e.fs.StringVar(p, name, def, usage+" (env "+env+")")
}

func (e *envFlag) dur(p *time.Duration, name, env string, def time.Duration, usage string) {
	e.record(name, env, "duration", fmtDuration(def), usage)
	if v, ok := e.env(env); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			e.err = errors.Join(e.err, fmt.Errorf("%s=%q: %w", env, v, err))
		} else {
			def = d
		}
	}
	e.fs.DurationVar(p, name, def, usage+" (env "+env+")")
}

func (e *envFlag) int(p *int, name, env string, def int, usage string) {
	e.record(name, env, "int", strconv.Itoa(def), usage)
	if v, ok := e.env(env); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			e.err = errors.Join(e.err, fmt.Errorf("%s=%q: %w", env, v, err))
		} else {
			def = n
		}
	}
	e.fs.IntVar(p, name, def, usage+" (env "+env+")")
}

func (e *envFlag) bool(p *bool, name, env string, usage string) {
	e.record(name, env, "bool", "false", usage)
	def := false
	if v, ok := e.env(env); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			e.err = errors.Join(e.err, fmt.Errorf("%s=%q: %w", env, v, err))
		}
		def = b
	}
	e.fs.BoolVar(p, name, def, usage+" (env "+env+")")
}

// fmtDuration is d as a flag takes it, without time.Duration.String's
// trailing zero units: 72h, not 72h0m0s.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// configLists are the flags parsed further after fs.Parse.
type configLists struct {
	proxies, dcLists, owned string
	budget                  string
}

// declareConfig declares the role commands' flags on a new flag set, into c
// and l, reading the environment with lookup (nil: none). The order of the
// sections and of the flags in them is the order of docs/configuration.md.
func declareConfig(name string, c *Config, l *configLists, lookup func(string) (string, bool)) *envFlag {
	fs := flag.NewFlagSet("viewcount "+name, flag.ContinueOnError)
	e := &envFlag{fs: fs, lookup: lookup}
	rules := judge.DefaultConfig()

	e.section("Process and HTTP", "Where a process listens and keeps its files, and how much it takes in at once.")
	e.str(&c.Listen, "listen", "VIEWCOUNT_LISTEN", ":8080", "HTTP listen address")
	e.str(&c.Data, "data", "VIEWCOUNT_DATA", "./data", "data directory (embedded NATS and chDB files, admin token)")
	e.str(&c.LogLevel, "log-level", "VIEWCOUNT_LOG_LEVEL", "info", "debug, info, warn or error")
	e.str(&c.PprofListen, "pprof-listen", "VIEWCOUNT_PPROF_LISTEN", "", "serve Go's /debug/pprof on this address, e.g. 127.0.0.1:6060 (keep it on loopback; the profiling commands are in docs/benchmarks/README.md; it also samples blocking and lock contention); empty = off")
	e.int(&c.MaxConns, "max-conns", "VIEWCOUNT_MAX_CONNS", 0, "HTTP connections open at once (0 = half the open-file limit, at least 64 and at most 65536, the other half left to the stream and the store); idle keep-alive connections give way first")
	e.int(&c.MaxConnsPerIP, "max-conns-per-ip", "VIEWCOUNT_MAX_CONNS_PER_IP", 0, "HTTP connections open at once from one address, IPv6 /64 (0 = a sixteenth of the default --max-conns, the one derived from the open-file limit, at least 16); --trusted-proxies are exempt")
	e.str(&l.budget, "memory-budget", "VIEWCOUNT_MEMORY_BUDGET", "", fmt.Sprintf("resident memory the process stays under, as GOMEMLIMIT writes a size (512MiB, 2GiB), split among Go's heap limit, the embedded engine's memory and caches, the validators' tables and the stats cache (docs/operations.md, Memory budget); empty = a quarter of the machine's (or the container's) memory, at least %s and at most %s; off = no budget: chDB's and Go's own defaults and the built-in table sizes", membudget.Format(membudget.Min), membudget.Format(membudget.DefaultMax)))
	e.dur(&c.Validate.MaxLag, "ready-max-lag", "VIEWCOUNT_READY_MAX_LAG", 2*time.Minute, "/readyz fails part lag when the oldest event not yet counted is older than this beyond --settle-window (settling holds some views that long on purpose), and part partition/<p> when that partition has events waiting but makes no progress for this long")

	e.section("Admin", "The admin API's bearer token.")
	e.str(&c.API.AdminToken, "admin-token", "VIEWCOUNT_ADMIN_TOKEN", "", "admin bearer token; empty (and no file) generates one on first start, stored in the data dir (mode 0600) and printed once. Prefer the env variable or --admin-token-file: a command line is readable by every local user (ps, /proc/PID/cmdline), so the flag logs a warning")
	e.str(&c.API.AdminTokenFile, "admin-token-file", "VIEWCOUNT_ADMIN_TOKEN_FILE", "", "file holding the admin bearer token (e.g. a Docker or systemd secret, mode 0600)")

	e.section("Stream (NATS)", "The JetStream stream every event is made durable in before it is acknowledged.")
	e.str(&c.Stream.URL, "nats-url", "NATS_URL", "", "URL of a NATS cluster with JetStream; empty runs an embedded server")
	e.int(&c.Stream.Partitions, "partitions", "VIEWCOUNT_PARTITIONS", 0, fmt.Sprintf("stream partitions, each validated by one owner, fixed once the stream exists (0 = the existing stream's; for a new stream %d on the embedded server, %d on a NATS cluster). More let more validator processes share the load; on one machine they only cost (smaller group commits, a store insert per partition per flush)", viewcount.EmbeddedPartitions, viewcount.DefaultPartitions))
	e.dur(&c.Stream.Retention, "retention", "VIEWCOUNT_RETENTION", 72*time.Hour, "how long raw events stay in the stream, at least 25h: validators rebuild their state from it")
	e.int(&c.Stream.Replicas, "nats-replicas", "VIEWCOUNT_NATS_REPLICAS", 0, "servers of the NATS cluster that keep a copy of the stream and buckets (JetStream's R; 3 survives losing one), applied to existing ones too (JetStream rescales them); 0 = keep what the deployment has, 1 for a new stream; the embedded server refuses more than 1")
	e.bool(&c.Stream.SyncAlways, "nats-sync-always", "VIEWCOUNT_NATS_SYNC_ALWAYS", "embedded NATS fsyncs every write (survives power loss, not just a crash; slower)")

	e.section("Store (ClickHouse)", "Where validated views are written and counted: embedded chDB, or a ClickHouse server.")
	e.str(&c.Store.DSN, "clickhouse-dsn", "CLICKHOUSE_DSN", "", "ClickHouse server DSN (clickhouse://user:pass@host:9000/db); empty uses embedded chDB")
	e.str(&c.Store.DataDir, "store-dir", "VIEWCOUNT_STORE_DIR", "", "directory for the embedded store's files (default: the data dir)")
	e.str(&c.Store.Database, "database", "VIEWCOUNT_DATABASE", "", "ClickHouse database to create and use (default: the DSN's, else viewcount)")
	e.str(&c.Store.Cluster, "cluster", "VIEWCOUNT_CLUSTER", "", "ClickHouse cluster (a remote_servers name) to keep the schema on: Replicated tables per shard under Distributed tables of the one-server names (sql/migrations/cluster); needs CLICKHOUSE_DSN, refused on the embedded store; empty = one server")
	e.dur(&c.Store.RawRetention, "raw-retention", "VIEWCOUNT_RAW_RETENTION", 9600*time.Hour, "how long judged events stay in views_raw, a ClickHouse TTL in whole days (rounded up), applied at start when it differs; at least --retention; the rollups keep their counts for good")
	e.dur(&c.Validate.FlushEvery, "flush-every", "VIEWCOUNT_FLUSH_EVERY", time.Second, "longest a validated view waits before its partition's batch is inserted (each insert costs the store a fixed amount of work, new parts on disk; shorter = lower lag, more store CPU)")
	e.dur(&c.Validate.Feed.Every, "feed-every", "VIEWCOUNT_FEED_EVERY", 3*time.Second, "longest a stored view waits before its partition's rows are fed to the rollups, where counts read them; a partition also feeds at 200,000 rows (each feed costs the store a fixed amount of CPU whatever its rows, see BenchmarkInsertParts; shorter = fresher counts, more store CPU)")

	e.section("Ingest", "What the ingest role takes from a request and what it adds to it.")
	e.str(&l.proxies, "trusted-proxies", "VIEWCOUNT_TRUSTED_PROXIES", "", "comma-separated CIDRs of proxies in front: only requests from these may set the client address with X-Forwarded-For, and they are exempt from --max-conns-per-ip; empty = none")
	e.int(&c.Ingest.ClientRate, "client-rate", "VIEWCOUNT_CLIENT_RATE", 0, fmt.Sprintf("pixel and beacon requests per second per client address (behind --trusted-proxies, the X-Forwarded-For one), answered 429 beyond (0 = default %d, bursts of 2 s; negative = off)", ratelimit.DefaultRate))
	e.bool(&c.Ingest.KeepQuery, "keep-query", "VIEWCOUNT_KEEP_QUERY", "keep query strings in page paths, pixel and beacon (without it only the utm_* tags are kept, in their own columns)")
	e.str(&l.dcLists, "datacenter-ranges", "VIEWCOUNT_DATACENTER_RANGES", "", "comma-separated files of datacenter CIDRs, one per line, # comments (ingest marks hits from them); example: ingest/lists/datacenter-example.txt")
	e.str(&c.Ingest.CountryHeader, "country-header", "VIEWCOUNT_COUNTRY_HEADER", "", "request header a CDN in front sets to the client's country, e.g. CF-IPCountry (trusted only when named); two ASCII letters in either case count, XX, T1 (Tor), ZZ and anything else mean unknown and the country database is asked instead; empty = none")
	e.str(&c.Ingest.CountryDB, "country-db", "VIEWCOUNT_COUNTRY_DB", "", "MMDB country database file (ip-location-db country_code or MaxMind country.iso_code records; one named here that does not open fails the start); empty = the one 'make geo' put in the cache (missing: a warning, no countries), off = no country lookup")
	e.str(&c.Ingest.ASNDB, "asn-db", "VIEWCOUNT_ASN_DB", "", "directory of the AS-number data (asn-ipv4-num.csv, asn-ipv6.csv of @ip-location-db/asn; one named here that does not load fails the start); empty = the one 'make asn' put in the cache (missing: a warning, no AS numbers), off = no lookup. Every view records its AS number; views from hosting networks (validate/judge/lists/hosting-asns.txt) are datacenter")

	e.section("Validation rules", "How the validators judge each view; a zero number or duration takes the built-in value the usage names.")
	e.str(&l.owned, "validate-partitions", "VIEWCOUNT_VALIDATE_PARTITIONS", "", "partitions this process validates, e.g. 0-3,6 (a lease keeps one owner per partition); empty = all")
	e.dur(&c.Validate.Rules.DuplicateWindow, "duplicate-window", "VIEWCOUNT_DUPLICATE_WINDOW", rules.DuplicateWindow, "repeat views of a page by a visitor within this count once")
	e.int(&c.Validate.Rules.MaxKeys, "window-keys", "VIEWCOUNT_WINDOW_KEYS", 0, fmt.Sprintf("keys each duplicate window (event ids for duplicate_id, visitor+page for duplicate) remembers per partition, 16 bytes each; when full the oldest are forgotten early, see Sizing a machine in docs/invalid-traffic.md (0 = %d, a per-process budget for both windows split among the partitions this process validates)", judge.ProcessWindowKeys))
	e.str(&c.Validate.BotList, "bot-list", "VIEWCOUNT_BOT_LIST", "", "file of extra bot user-agent patterns (case-insensitive regexps), one per line, # comments")
	e.bool(&c.Validate.Rules.ReplaceBotList, "bot-list-replace", "VIEWCOUNT_BOT_LIST_REPLACE", "only --bot-list decides bot_ua, not the built-in bot lists")
	e.str(&c.Validate.SpamReferrers, "spam-referrers", "VIEWCOUNT_SPAM_REFERRERS", "", "file of referrer-spam hosts, one per line, subdomains matching too (extends the built-in list)")
	e.bool(&c.Validate.Rules.ReplaceSpamReferrers, "spam-referrers-replace", "VIEWCOUNT_SPAM_REFERRERS_REPLACE", "use only --spam-referrers, not the built-in list")
	e.bool(&c.Validate.Rules.AllowMissingHints, "allow-missing-hints", "VIEWCOUNT_ALLOW_MISSING_HINTS", "accept beacon events without browser hints (bad_hints otherwise), e.g. while old cached copies of vc.js are about")
	e.bool(&c.Validate.Rules.IgnoreHeaders, "ignore-headers", "VIEWCOUNT_IGNORE_HEADERS", "do not reject views whose request lacks the headers the claimed browser sends (header_mismatch), e.g. behind a proxy that strips Accept-Language")
	e.dur(&c.Validate.Rules.SettleWindow, "settle-window", "VIEWCOUNT_SETTLE_WINDOW", 0, fmt.Sprintf("how long views of watched visitors/networks are held before counting, see Settling in docs/invalid-traffic.md (0 = default %s, negative = off)", fmtDuration(rules.SettleWindow)))
	e.int(&c.Validate.Rules.VisitorRateLimit, "visitor-rate", "VIEWCOUNT_VISITOR_RATE", 0, fmt.Sprintf("views per minute beyond which a visitor's views are rate (0 = default %d)", rules.VisitorRateLimit))
	e.int(&c.Validate.Rules.NetworkRateLimit, "network-rate", "VIEWCOUNT_NETWORK_RATE", 0, fmt.Sprintf("views per minute beyond which a /24 or /48's views are rate (0 = default %d)", rules.NetworkRateLimit))
	e.int(&c.Validate.Rules.BlockRateLimit, "block-rate", "VIEWCOUNT_BLOCK_RATE", 0, fmt.Sprintf("views of one page per minute beyond which an IPv6 /32's views of it are rate, whichever of its /48s they come from; raise it for an audience of many thousands a minute on one page (0 = default %d)", rules.BlockRateLimit))
	e.int(&c.Validate.Rules.RotationMaxUAs, "rotation-uas", "VIEWCOUNT_ROTATION_UAS", 0, fmt.Sprintf("distinct user agents per network within --rotation-window beyond which its views are network_rotation (0 = default %d)", rules.RotationMaxUAs))
	e.dur(&c.Validate.Rules.RotationWindow, "rotation-window", "VIEWCOUNT_ROTATION_WINDOW", 0, fmt.Sprintf("window of the rotation rule (0 = default %s)", fmtDuration(rules.RotationWindow)))

	e.section("Public counts and stats", "How fresh the public counts are and how much of the stats API's answers is kept.")
	e.dur(&c.API.PublicLag, "public-lag", "VIEWCOUNT_PUBLIC_LAG", 10*time.Second, "how often public counts are refreshed, at least 1s")
	e.int(&c.API.StatsCacheMB, "stats-cache-mb", "VIEWCOUNT_STATS_CACHE_MB", -1, fmt.Sprintf("MiB of stats API answers kept in memory: a range that ended more than the site's lag plus 10 min ago is read once, one still counting at most every 10 s, the answers' max-age (0 = off; -1 = the memory budget's share, 5 %% of Go's: %d at %s, %d with --memory-budget off)", defaultPlan.StatsCache>>20, membudget.Format(defaultPlan.Budget), statsCacheUnbudgeted))

	e.section("Analysts' SQL", "The read-only SQL listener (ClickHouse's HTTP interface) and the limits each analyst query runs under.")
	e.str(&c.SQL.Listen, "sql-listen", "VIEWCOUNT_SQL_LISTEN", "", "serve analysts' read-only SQL (ClickHouse's HTTP interface; every query checked before the engine sees it, see docs/analysts.md) on this address, e.g. 127.0.0.1:8123 (keep it on loopback or a private network); empty = off")
	e.str(&c.SQL.Upstream, "sql-upstream", "VIEWCOUNT_SQL_UPSTREAM", "", "with CLICKHOUSE_DSN: the ClickHouse server's HTTP URL as its read-only analyst user, http://analyst:PASSWORD@clickhouse:8123, where --sql-listen runs the queries it cleared (prefer the variable: a flag is readable by every local user)")
	e.dur(&c.SQL.MaxExecutionTime, "sql-max-execution-time", "VIEWCOUNT_SQL_MAX_EXECUTION_TIME", store.DefaultMaxExecutionTime, "longest an analyst request takes, the wait for the SQL connection, the checks and the query together (max_execution_time, whole seconds)")
	e.int(&c.SQL.MaxResultRows, "sql-max-result-rows", "VIEWCOUNT_SQL_MAX_RESULT_ROWS", store.DefaultMaxResultRows, "most rows an analyst query returns (max_result_rows); more is an error, never a silent cut")
	e.int(&c.SQL.MaxMemoryMB, "sql-max-memory-mb", "VIEWCOUNT_SQL_MAX_MEMORY_MB", 0, fmt.Sprintf("MiB one analyst query may use (max_memory_usage; 0 = half the embedded engine's share of the memory budget: %d at %s, %d with --memory-budget off or a ClickHouse server)", defaultPlan.Engine/2>>20, membudget.Format(defaultPlan.Budget), store.DefaultMaxMemoryUsage>>20))
	return e
}

// statsCacheUnbudgeted is the stats cache's size in MiB without a memory
// budget.
const statsCacheUnbudgeted = 64

// defaultPlan is the largest default budget's split, for the flags' help
// (the help is the same on every machine, so docs/configuration.md is).
var defaultPlan, _ = membudget.Split(membudget.DefaultMax, true)

// applyBudget splits the memory budget (--memory-budget's value, "" for
// the default on a machine of machine bytes) and sizes what it bounds
// unless a flag sized it already: the engine (when the process embeds the
// store, embedsStore), the validators' tables, the stats cache and an
// analyst query's memory.
// Go's limit is set by Run, not here: parsing has no side effects.
func (c *Config) applyBudget(flagValue string, machine int64, embedsStore bool) error {
	if flagValue != "off" { // off: the zero Plan, every part unbudgeted
		budget := membudget.Default(machine)
		if flagValue != "" {
			b, err := membudget.Parse(flagValue)
			if err != nil {
				return fmt.Errorf("--memory-budget %q: %w", flagValue, err)
			}
			budget = b
		}
		p, err := membudget.Split(budget, embedsStore)
		if err != nil {
			return fmt.Errorf("--memory-budget: %w", err)
		}
		c.Memory = p
	}
	p := c.Memory
	c.Store.Memory = store.Memory{Limit: p.Engine, MarkCache: p.MarkCache, Caches: p.Caches}
	c.Validate.Budget = validate.Budget{WindowKeys: p.WindowKeys, MaxHeld: p.MaxHeld, MaxOpenViews: p.MaxOpenViews, MaxVisits: p.MaxVisits}
	if c.API.StatsCacheMB == -1 {
		c.API.StatsCacheMB = statsCacheUnbudgeted
		if p.Budget > 0 {
			c.API.StatsCacheMB = int(p.StatsCache >> 20)
		}
	}
	if c.SQL.MaxMemoryMB == 0 {
		c.SQL.MaxMemoryMB = store.DefaultMaxMemoryUsage >> 20
		if p.Engine > 0 {
			c.SQL.MaxMemoryMB = max(1, int(p.Engine/2>>20))
		}
	}
	return nil
}

// ParseConfig builds the Config of the role command name (serve, ingest,
// validate or api) from args (the command line after the command) and the
// environment, as Run does before it starts the roles: a flag wins over
// its variable, a variable over the default. An error names what is
// wrong; -h prints the flags and returns flag.ErrHelp.
func ParseConfig(name string, args []string) (Config, error) {
	var c Config
	var l configLists
	e := declareConfig(name, &c, &l, os.LookupEnv)
	fs := e.fs
	if e.err != nil {
		return c, e.err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	fs.Visit(func(f *flag.Flag) { c.API.AdminTokenFlag = c.API.AdminTokenFlag || f.Name == "admin-token" })
	if c.API.AdminToken != "" && c.API.AdminTokenFile != "" {
		return c, errors.New("--admin-token (VIEWCOUNT_ADMIN_TOKEN) and --admin-token-file (VIEWCOUNT_ADMIN_TOKEN_FILE): give one")
	}
	c.Ingest.TrustedProxies = splitList(l.proxies)
	c.Ingest.DatacenterLists = splitList(l.dcLists)
	if l.owned != "" {
		var err error
		// Unconfigured, the count is the stream's, known only once it is
		// open: validate.New checks the list against it then.
		n := c.Stream.Partitions
		if n == 0 {
			n = 1024
		}
		if c.Validate.Partitions, err = parsePartitions(l.owned, n); err != nil {
			return c, fmt.Errorf("--validate-partitions: %w", err)
		}
	}
	if c.Store.DataDir == "" {
		c.Store.DataDir = c.Data
	}
	if c.API.PublicLag < time.Second {
		return c, fmt.Errorf("--public-lag %s: at least 1s", c.API.PublicLag)
	}
	// A validator replays the stream over events views_raw must still
	// hold (a replayed batch is deduplicated against them, and a repair
	// compares the two), so views_raw keeps at least what the stream keeps.
	if c.Store.RawRetention < c.Stream.Retention {
		return c, fmt.Errorf("--raw-retention %s is shorter than the stream's --retention %s: views_raw must keep at least what the stream can replay", c.Store.RawRetention, c.Stream.Retention)
	}
	// An ingest process opens no store: no engine share to set aside.
	if err := c.applyBudget(l.budget, membudget.Machine(), c.Store.DSN == "" && name != "ingest"); err != nil {
		return c, err
	}
	if c.API.StatsCacheMB < 0 || c.API.StatsCacheMB > 1<<20 {
		return c, fmt.Errorf("--stats-cache-mb %d: want -1 (from the memory budget), 0 (off) to 1048576", c.API.StatsCacheMB)
	}
	switch {
	case c.SQL.Listen != "" && c.Store.DSN != "" && c.SQL.Upstream == "":
		return c, fmt.Errorf("--sql-listen with CLICKHOUSE_DSN needs VIEWCOUNT_SQL_UPSTREAM (--sql-upstream): the ClickHouse server's HTTP URL as its read-only analyst user, e.g. http://analyst:PASSWORD@clickhouse:8123")
	case c.SQL.Upstream != "" && c.Store.DSN == "":
		return c, fmt.Errorf("--sql-upstream is for CLICKHOUSE_DSN: the embedded store runs analyst queries itself")
	}
	if c.SQL.MaxExecutionTime < time.Second || c.SQL.MaxResultRows < 1 || c.SQL.MaxMemoryMB < 1 {
		return c, fmt.Errorf("--sql-max-execution-time %s, --sql-max-result-rows %d, --sql-max-memory-mb %d: want at least 1s, 1 and 1", c.SQL.MaxExecutionTime, c.SQL.MaxResultRows, c.SQL.MaxMemoryMB)
	}
	if c.Store.Cluster != "" && c.Store.DSN == "" {
		return c, fmt.Errorf("--cluster %s needs CLICKHOUSE_DSN (--clickhouse-dsn): the embedded store is one machine", c.Store.Cluster)
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parsePartitions reads "0-3,6" into [0 1 2 3 6], each below n.
func parsePartitions(s string, n int) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for _, part := range splitList(s) {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= n {
			return nil, fmt.Errorf("%q: want partitions (or ranges a-b) from 0 to %d", part, n-1)
		}
		for p := a; p <= b; p++ {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}
