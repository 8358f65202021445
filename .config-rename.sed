# Renames the flat app.Config fields to the nested ones. Idempotent:
#   sed -i -E -f .config-rename.sed FILES... && gofmt -w FILES...
# (gofmt re-indents the comments of the multi-line literals turned into
# statements.) First the struct literals of Config in the tests, each
# turned into statements on the new fields, then the selectors on the
# receivers the tests use: c. (startMainWith callbacks, parsed configs)
# and cfg. (also m.cfg., t.cfg., c.cfg.). o. is a NATS server's options,
# info. and si. JetStream's: left alone.

# cfg := Config{ ... } over several lines (main_test.go, cluster_test.go).
/^\tcfg := (app\.)?Config\{$/,/^\t\}$/{
	s/^\tcfg := (app\.)?Config\{$/\tvar cfg \1Config/
	/^\t\}$/d
	s/^\t\t(\/\/.*)$/\t\1/
	s/^\t\tListen: "127\.0\.0\.1:0", Data: data, StoreDir: storetest\.Dir\(\), Database: (db|h\.db),$/\tcfg.Listen, cfg.Data, cfg.Store.DataDir, cfg.Store.Database = "127.0.0.1:0", data, storetest.Dir(), \1/
	s/^\t\tAdminToken: adminToken, Partitions: 4,$/\tcfg.API.AdminToken, cfg.Stream.Partitions = adminToken, 4/
	s/^\t\/\/ Short timers \(production: a 1 s flush, a 3 s feed, a 10 s public$/\t\/\/ Short timers (production: a 1 s flush and held tick, a 3 s feed, a/
	s/^\t\/\/ lag\), so a test waits on its polling deadline, not on a timer\. A$/\t\/\/ 10 s public lag), so a test waits on its polling deadline, not on a/
	s/^\t\/\/ test whose assertion depends on a timer's length sets that one\.$/\t\/\/ timer. A test whose assertion depends on a timer's length sets that one./
	s/^\t\tFlushEvery: testTimer, FeedEvery: testTimer, PublicLag: testTimer,$/\tcfg.Validate.FlushEvery, cfg.Validate.HeldEvery, cfg.Validate.Feed.Every = testTimer, testTimer, testTimer\n\tcfg.API.PublicLag = testTimer/
	s/^\t\tRetention: 72 \* time\.Hour, Rules: (judge\.Config\{.*\}),$/\tcfg.Stream.Retention, cfg.Validate.Rules = 72 * time.Hour, \1/
	s/^\t\tNATSURL: h\.cl\.URL\(\), NATSReplicas: 3, Partitions: 4,$/\tcfg.Stream.URL, cfg.Stream.Replicas, cfg.Stream.Partitions = h.cl.URL(), 3, 4/
	s/^\t\tPublicLag: testTimer, AdminToken: adminToken, Retention: 72 \* time\.Hour,$/\tcfg.API.PublicLag, cfg.API.AdminToken, cfg.Stream.Retention = testTimer, adminToken, 72 * time.Hour/
	s/^\t\tTrustedProxies: (\[\]string\{"127\.0\.0\.1\/32"\}), ASNDB: "off", CountryDB: "off",$/\tcfg.Ingest.TrustedProxies, cfg.Ingest.ASNDB, cfg.Ingest.CountryDB = \1, "off", "off"/
	s/^\t\tFlushEvery: testTimer,$/\tcfg.Validate.FlushEvery, cfg.Validate.HeldEvery = testTimer, testTimer/
	s/^\t\t(\w+): +(.*),$/\tcfg.\1 = \2/
}

# One-line literals passed to NewMain or assigned (admintoken_test.go,
# edge_test.go, lock_test.go, repair_progress_test.go).
s/^(\t+)cfg := (app\.)?Config\{Listen: "127\.0\.0\.1:0", Data: t\.TempDir\(\), PublicLag: time\.Second, Partitions: 1, Retention: 72 \* time\.Hour,$/\1cfg := \2Config{Listen: "127.0.0.1:0", Data: t.TempDir()}\n\1cfg.API.PublicLag, cfg.Stream.Partitions, cfg.Stream.Retention = time.Second, 1, 72 * time.Hour/
s/^(\t+)\tAdminToken: secret, AdminTokenFlag: true, CountryDB: "off", ASNDB: "off"\}$/\1cfg.API.AdminToken, cfg.API.AdminTokenFlag, cfg.Ingest.CountryDB, cfg.Ingest.ASNDB = secret, true, "off", "off"/
s/^(\t+)m := (app\.)?NewMain\((app\.)?Config\{Listen: "127\.0\.0\.1:0", Data: t\.TempDir\(\), PublicLag: time\.Second, Retention: 72 \* time\.Hour,$/\1cfg := \3Config{Listen: "127.0.0.1:0", Data: t.TempDir(), MaxConnsPerIP: 2}\n\1cfg.API.PublicLag, cfg.Stream.Retention = time.Second, 72 * time.Hour\n\1cfg.Ingest.TrustedProxies, cfg.Ingest.ClientRate = []string{"127.0.0.2"}, 1\n\1m := \2NewMain(cfg,/
/^\t+TrustedProxies: \[\]string\{"127\.0\.0\.2"\}, MaxConnsPerIP: 2, ClientRate: 1\},$/d
s/^(\t+)(\w+) := (app\.)?NewMain\((app\.)?Config\{Listen: "127\.0\.0\.1:0", Data: (\w+), StoreDir: \5, PublicLag: time\.Second,$/\1cfg := \4Config{Listen: "127.0.0.1:0", Data: \5}\n\1cfg.Store.DataDir, cfg.API.PublicLag, cfg.Stream.Retention = \5, time.Second, 72 * time.Hour\n\1\2 := \3NewMain(cfg,/
s/^(\t+)Retention: 72 \* time\.Hour\}, ((app\.)?Roles\{Ingest: true\})/\1\2/
s/^(\t+)refused := (app\.)?NewMain\((app\.)?Config\{Listen: "127\.0\.0\.1:0", Data: data, StoreDir: storetest\.Dir\(\), Database: db,$/\1cfg := \3Config{Listen: "127.0.0.1:0", Data: data}\n\1cfg.Store.DataDir, cfg.Store.Database = storetest.Dir(), db\n\1cfg.API.PublicLag, cfg.API.AdminToken, cfg.Stream.Partitions, cfg.Stream.Retention = time.Second, adminToken, 4, 72 * time.Hour\n\1refused := \2NewMain(cfg,/
/^\t+PublicLag: time\.Second, AdminToken: adminToken, Partitions: 4, Retention: 72 \* time\.Hour\},$/d

# Selectors.
s/\b(c|cfg)\.StoreDir\b/\1.Store.DataDir/g
s/\b(c|cfg)\.Database\b/\1.Store.Database/g
s/\b(c|cfg)\.NATSURL\b/\1.Stream.URL/g
s/\b(c|cfg)\.ClickHouseDSN\b/\1.Store.DSN/g
s/\b(c|cfg)\.PublicLag\b/\1.API.PublicLag/g
s/\b(c|cfg)\.TrustedProxies\b/\1.Ingest.TrustedProxies/g
s/\b(c|cfg)\.AdminToken\b/\1.API.AdminToken/g
s/\b(c|cfg)\.AdminTokenFile\b/\1.API.AdminTokenFile/g
s/\b(c|cfg)\.AdminTokenFlag\b/\1.API.AdminTokenFlag/g
s/\b(c|cfg)\.Partitions\b/\1.Stream.Partitions/g
s/\b(c|cfg)\.Retention\b/\1.Stream.Retention/g
s/\b(c|cfg)\.BotList\b/\1.Validate.BotList/g
s/\b(c|cfg)\.SpamReferrers\b/\1.Validate.SpamReferrers/g
s/\b(c|cfg)\.DatacenterLists\b/\1.Ingest.DatacenterLists/g
s/\b(c|cfg)\.OwnPartitions\b/\1.Validate.Partitions/g
s/\b(c|cfg)\.FlushEvery\b/\1.Validate.FlushEvery/g
s/\b(c|cfg)\.FeedEvery\b/\1.Validate.Feed.Every/g
s/\b(c|cfg)\.KeepQuery\b/\1.Ingest.KeepQuery/g
s/\b(c|cfg)\.NATSSyncAlways\b/\1.Stream.SyncAlways/g
s/\b(c|cfg)\.NATSReplicas\b/\1.Stream.Replicas/g
s/\b(c|cfg)\.ReadyMaxLag\b/\1.Validate.MaxLag/g
s/\b(c|cfg)\.ClientRate\b/\1.Ingest.ClientRate/g
s/\b(c|cfg)\.RawRetention\b/\1.Store.RawRetention/g
s/\b(c|cfg)\.CountryHeader\b/\1.Ingest.CountryHeader/g
s/\b(c|cfg)\.CountryDB\b/\1.Ingest.CountryDB/g
s/\b(c|cfg)\.StatsCacheMB\b/\1.API.StatsCacheMB/g
s/\b(c|cfg)\.ASNDB\b/\1.Ingest.ASNDB/g
s/\b(c|cfg)\.SQLListen\b/\1.SQL.Listen/g
s/\b(c|cfg)\.SQLUpstream\b/\1.SQL.Upstream/g
s/\b(c|cfg)\.SQLMaxExecutionTime\b/\1.SQL.MaxExecutionTime/g
s/\b(c|cfg)\.SQLMaxResultRows\b/\1.SQL.MaxResultRows/g
s/\b(c|cfg)\.SQLMaxMemoryMB\b/\1.SQL.MaxMemoryMB/g
s/\b(c|cfg)\.Rules\b/\1.Validate.Rules/g
s/\b(c|cfg)\.Cluster\b/\1.Store.Cluster/g
