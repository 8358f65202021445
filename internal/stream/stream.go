// Package stream owns the JetStream side every role shares: it starts the
// embedded NATS server (or connects to a cluster), and creates the VIEWS
// stream and the key-value buckets with the settings the invariants need.
// Roles get a *Conn and use its JetStream handle; none of them configures the
// stream on its own, so the retention and partition count are set in one place.
// A supervisor owned by the Conn proves every few seconds that the stream
// takes writes, reports it (health part "stream") and restarts an embedded
// server a transient fault left unwritable (see supervisor). It keeps the
// site and token registries (Sites, Tokens) in their key-value buckets;
// what they hold and the errors they return are the root package's
// vocabulary (viewcount.Site, viewcount.Token, viewcount.ErrSiteUnknown, …).
//
// It never sees an event's contents: encoding lives in package viewcount.
package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/viewcount/viewcount"
)

// Config says where the stream lives.
type Config struct {
	URL     string // NATS cluster; empty starts an embedded server
	DataDir string // embedded: JetStream files go under DataDir/nats
	// Partitions: validator partitions; 0 = the existing stream's, or for
	// a new one viewcount.DefaultPartitions (viewcount.EmbeddedPartitions
	// when URL is empty).
	Partitions int
	Retention  time.Duration // how long raw events are kept; default 72h
	// SyncAlways makes the embedded server fsync every write. Without it an
	// acknowledged event survives the death of this process (the data is in
	// the OS page cache) but not a power cut within the sync interval.
	SyncAlways bool
	// Health receives part "stream": whether a write gets through now
	// (nil: not reported, Ready still reflects it).
	Health HealthReporter
	// ProbeEvery is how often the supervisor writes a probe; default 2s.
	ProbeEvery time.Duration
	// Replicas is how many servers of a NATS cluster keep each copy of the
	// stream and the buckets (JetStream's R). Three survive the loss of one
	// server without losing an acknowledged event. 0 keeps what the
	// existing stream has (1 for a new one): JetStream applies a changed
	// count on update, so a role or a `viewcount check` started without
	// the setting must not scale a replicated deployment down to one copy.
	Replicas int
}

// HealthReporter is what the supervisor reports to; *viewcount.Metrics
// implements it. A nil error means healthy.
type HealthReporter interface {
	SetHealth(part string, err error)
}

// The duplicate-id window is 24 h and a validator rebuilds its state by
// replaying that much stream, so retention must comfortably exceed it.
const minRetention = 25 * time.Hour

const metaPartitions = "viewcount_partitions"

// LeaseTTL is how long a validator's claim on a partition lasts unrenewed.
const LeaseTTL = 15 * time.Second

// ErrPartitions is returned when the existing stream was created with another
// partition count: silently changing it would move visitors between
// validators and break duplicate detection.
var ErrPartitions = errors.New("stream: partition count differs from the existing stream")

// Conn is a connection to JetStream with the VIEWS stream ensured.
type Conn struct {
	NC         *nats.Conn
	JS         jetstream.JetStream
	Partitions int

	emb    *embedded // nil with an external cluster
	url    string
	logger *slog.Logger
	sup    *supervisor
	// replicas is Config.Replicas, for buckets opened after ensure.
	replicas int
}

// duplicateWindow is how long JetStream remembers a message id.
const duplicateWindow = 20 * time.Second

func (c *Config) defaults() error {
	if c.Partitions < 0 || c.Partitions > 1024 {
		return fmt.Errorf("stream: partitions %d out of range 1-1024", c.Partitions)
	}
	if c.Replicas < 0 || c.Replicas > 5 {
		return fmt.Errorf("stream: replicas %d out of range 1-5 (JetStream's limit; 0 keeps the stream's)", c.Replicas)
	}
	if c.URL == "" && c.Replicas > 1 {
		return fmt.Errorf("stream: replicas %d needs a NATS cluster (NATS_URL); the embedded server is one node", c.Replicas)
	}
	if c.Retention == 0 {
		c.Retention = 72 * time.Hour
	}
	if c.ProbeEvery <= 0 {
		c.ProbeEvery = 2 * time.Second
	}
	if c.Retention < minRetention {
		return fmt.Errorf("stream: retention %s is shorter than the %s validators replay", c.Retention, minRetention)
	}
	if c.URL == "" && c.DataDir == "" {
		return errors.New("stream: embedded server needs a data dir")
	}
	return nil
}

// Open starts or connects to NATS and ensures the stream and buckets exist.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*Conn, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	c := &Conn{Partitions: cfg.Partitions, logger: logger.With("component", "stream")}
	url := cfg.URL
	if url == "" {
		emb, err := startEmbedded(filepath.Join(cfg.DataDir, "nats"), cfg.SyncAlways, logger)
		if err != nil {
			return nil, err
		}
		c.emb = emb
		url = nats.DefaultURL // ignored: the connection is in-process
	}
	c.url = url
	nc, err := nats.Connect(url, c.clientOptions()...)
	if err != nil {
		c.shutdownServer()
		return nil, fmt.Errorf("stream: connect %s: %w", redactURL(url), err)
	}
	c.NC = nc
	c.JS, err = jetstream.New(nc)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("stream: jetstream: %w", err)
	}
	if err := c.ensure(ctx, cfg); err != nil {
		c.Close()
		return nil, err
	}
	c.sup = startSupervisor(c, cfg.Health, cfg.ProbeEvery)
	if c.emb != nil {
		c.logger.Info("embedded NATS server started", "dir", filepath.Join(cfg.DataDir, "nats"), "partitions", c.Partitions)
	} else {
		c.logger.Info("connected to NATS", "url", redactURL(url), "partitions", c.Partitions)
	}
	return c, nil
}

// clientOptions are every client's: reconnecting for ever, so a stalled or
// restarted server (embedded or not) is rejoined without the roles noticing
// more than failed requests meanwhile.
func (c *Conn) clientOptions() []nats.Option {
	opts := []nats.Option{
		nats.Name("viewcount"),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
	}
	if c.emb != nil {
		opts = append(opts, nats.InProcessServer(c.emb))
	}
	return opts
}

func (c *Conn) ensure(ctx context.Context, cfg Config) error {
	if s, err := c.JS.Stream(ctx, viewcount.StreamName); err == nil {
		if cfg.Replicas == 0 {
			cfg.Replicas = s.CachedInfo().Config.Replicas
		}
		got := s.CachedInfo().Config.Metadata[metaPartitions]
		switch n, perr := strconv.Atoi(got); {
		case got == "":
		case perr != nil || n < 1 || n > 1024:
			return fmt.Errorf("stream: %s records partition count %q", viewcount.StreamName, got)
		case cfg.Partitions == 0:
			// Unconfigured: keep what the stream was created with, so a
			// deployment made under an older default keeps working.
			cfg.Partitions = n
		case cfg.Partitions != n:
			return fmt.Errorf("%w: stream has %d, configured %d", ErrPartitions, n, cfg.Partitions)
		}
	} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("stream: look up %s: %w", viewcount.StreamName, err)
	}
	if cfg.Partitions == 0 {
		cfg.Partitions = viewcount.DefaultPartitions
		if cfg.URL == "" {
			cfg.Partitions = viewcount.EmbeddedPartitions
		}
	}
	c.Partitions = cfg.Partitions
	cfg.Replicas = max(cfg.Replicas, 1)
	want := strconv.Itoa(cfg.Partitions)
	dups := duplicateWindow
	if cfg.Retention > 0 {
		dups = min(dups, cfg.Retention) // JetStream refuses a longer one
	}
	_, err := c.JS.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        viewcount.StreamName,
		Description: "raw page views, partitioned by visitor",
		Subjects:    []string{viewcount.SubjectWildcard},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      cfg.Retention,
		// The message ids only catch nats.go republishing a message it got
		// no answer for (ingest's publisher), which happens within a
		// second or two; each remembered id costs ~200 bytes of the
		// server's heap, ~40 MiB per 2 minutes at 20k views/s.
		Duplicates: dups,
		Metadata:   map[string]string{metaPartitions: want},
		Replicas:   cfg.Replicas,
	})
	if err != nil {
		return fmt.Errorf("stream: create %s: %w", viewcount.StreamName, err)
	}
	buckets := []jetstream.KeyValueConfig{
		{Bucket: viewcount.BucketSites, Description: "registered sites", History: 1, Storage: jetstream.FileStorage},
		// A salt older than a day is useless and, deleted, makes yesterday's
		// visitor ids unlinkable to today's: the TTL is the deletion.
		{Bucket: viewcount.BucketSalts, Description: "daily visitor-id salts", History: 1, TTL: 48 * time.Hour, Storage: jetstream.FileStorage},
		{Bucket: viewcount.BucketRollup, Description: "rollup batch intents", History: 1, Storage: jetstream.FileStorage},
		// A lease not renewed within the TTL expires, so a crashed
		// validator's partitions are taken over by another within seconds.
		{Bucket: viewcount.BucketLeases, Description: "validator partition leases", History: 1, TTL: LeaseTTL, Storage: jetstream.FileStorage},
		{Bucket: viewcount.BucketRules, Description: "validator rule sets by version", History: 1, Storage: jetstream.FileStorage},
	}
	c.replicas = cfg.Replicas
	for _, b := range buckets {
		b.Replicas = cfg.Replicas
		if _, err := c.JS.CreateOrUpdateKeyValue(ctx, b); err != nil {
			return fmt.Errorf("stream: bucket %s: %w", b.Bucket, err)
		}
	}
	probe := probeStream
	probe.Replicas = cfg.Replicas
	if _, err := c.JS.CreateOrUpdateStream(ctx, probe); err != nil {
		return fmt.Errorf("stream: create %s: %w", probeStream.Name, err)
	}
	return nil
}

// NewClient opens another client connection to the same server, in-process
// for an embedded one. Each process role could use its own; tests use it to
// cut one role's connection without touching the others. The caller closes it.
func (c *Conn) NewClient() (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(c.url, c.clientOptions()...)
	if err != nil {
		return nil, nil, fmt.Errorf("stream: connect: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("stream: jetstream: %w", err)
	}
	return nc, js, nil
}

// KV opens one of the buckets ensured by Open.
func (c *Conn) KV(ctx context.Context, bucket string) (jetstream.KeyValue, error) {
	kv, err := c.JS.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("stream: bucket %s: %w", bucket, err)
	}
	return kv, nil
}

// Ready reports whether the stream takes writes: connected now, and the
// supervisor's last probe write got through. Reachable is not enough: a
// server whose store refuses writes still answers every read.
func (c *Conn) Ready(context.Context) error {
	if !c.NC.IsConnected() {
		return fmt.Errorf("stream: not connected (%s)", c.NC.Status())
	}
	if c.sup != nil {
		return c.sup.state()
	}
	return nil
}

// Close stops the supervisor, flushes and closes the connection, then stops
// an embedded server.
func (c *Conn) Close() {
	if c.sup != nil {
		c.sup.stop()
	}
	if c.NC != nil {
		if err := c.NC.Drain(); err != nil {
			c.NC.Close()
		}
		for i := 0; i < 100 && !c.NC.IsClosed(); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		c.NC.Close()
	}
	c.shutdownServer()
}

func (c *Conn) shutdownServer() {
	if c.emb != nil {
		c.emb.close()
	}
}

// redact drops credentials from a NATS URL before it is logged. The URL
// may be a comma-separated list of servers, each with its own user:pass@.
func redactURL(url string) string {
	servers := strings.Split(url, ",")
	for i, u := range servers {
		scheme, rest, ok := strings.Cut(u, "://")
		if !ok {
			continue
		}
		host, _, _ := strings.Cut(rest, "/")
		if at := strings.LastIndex(host, "@"); at >= 0 {
			servers[i] = scheme + "://***@" + rest[at+1:]
		}
	}
	return strings.Join(servers, ",")
}
