//go:build !race

package compose

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/viewcount/viewcount/sql/store"
)

// imageTag is the tag of an image reference ("nats:2.15-alpine" → "2.15-alpine").
func imageTag(image string) string {
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}
	return ""
}

// minor is "2.15" of "v2.15.2" or "2.15-alpine".
func minor(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return version
	}
	return parts[0] + "." + strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
}

// moduleVersion is the version of module path that go.mod requires (a
// test binary of a library package has no dependencies in its build info).
func moduleVersion(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == path {
			return f[1]
		}
	}
	t.Fatalf("module %s is not a dependency", path)
	return ""
}

// natsOptions parses a NATS service's command with nats-server's own flag
// parser, its config file read from the repository file mounted there.
func natsOptions(t *testing.T, name string, s types.ServiceConfig) *natsserver.Options {
	t.Helper()
	args := slices.Clone(s.Command)
	if len(args) > 0 && args[0] == "nats-server" {
		args = args[1:]
	}
	for i, a := range args {
		if i > 0 && (args[i-1] == "-c" || args[i-1] == "--config" || args[i-1] == "-config") {
			args[i] = bindSource(t, name, s, a)
		}
	}
	fs := flag.NewFlagSet("nats-server", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	opts, err := natsserver.ConfigureOptions(fs, args, func() {}, func() {}, func() {})
	if err != nil {
		t.Fatalf("%s: nats-server %v: %v", name, s.Command, err)
	}
	return opts
}

// TestComposeNATS: the NATS services are one JetStream cluster whose
// routes name exactly them, each with a unique name and its own volume,
// checked on its monitoring port; the roles reach all of them and keep 3
// replicas; the image runs the nats-server version the tests run in-process.
func TestComposeNATS(t *testing.T) {
	p := composeProject(t)
	servers := map[string]*natsserver.Options{}
	for name, s := range p.Services {
		if strings.HasPrefix(s.Image, "nats:") {
			servers[name] = natsOptions(t, name, s)
			if got, want := minor(imageTag(s.Image)), minor(moduleVersion(t, "github.com/nats-io/nats-server/v2")); got != want {
				t.Errorf("%s: image %s, the tests run nats-server %s", name, s.Image, want)
			}
		}
	}
	if len(servers) != 3 {
		t.Fatalf("NATS services %v: want a cluster of 3", sortedKeys(servers))
	}
	var clientPort int
	for _, name := range sortedKeys(servers) {
		o, s := servers[name], p.Services[name]
		clientPort = o.Port
		if o.ServerName != name || !o.JetStream || o.Cluster.Name == "" {
			t.Errorf("%s: server_name %q, jetstream %v, cluster %q: want its service name, JetStream on, a cluster name", name, o.ServerName, o.JetStream, o.Cluster.Name)
		}
		var routes []string
		for _, r := range o.Routes {
			routes = append(routes, r.Hostname())
			if r.Port() != strconv.Itoa(o.Cluster.Port) {
				t.Errorf("%s: route %s: the cluster listens on %d", name, r, o.Cluster.Port)
			}
		}
		sort.Strings(routes)
		if !slices.Equal(routes, sortedKeys(servers)) {
			t.Errorf("%s: routes to %v, want the NATS services %v", name, routes, sortedKeys(servers))
		}
		mounted := false
		for _, v := range s.Volumes {
			mounted = mounted || v.Type == types.VolumeTypeVolume && v.Target == o.StoreDir && v.Source == name
		}
		if !mounted {
			t.Errorf("%s: JetStream store_dir %s is not its own volume", name, o.StoreDir)
		}
		hc := s.HealthCheck
		if hc == nil || len(hc.Test) == 0 {
			t.Errorf("%s: no health check", name)
			continue
		}
		u, err := url.Parse(hc.Test[len(hc.Test)-1])
		if err != nil || u.Port() != strconv.Itoa(o.HTTPPort) || u.Path != "/healthz" {
			t.Errorf("%s: health check %v: want /healthz on the monitoring port %d", name, hc.Test, o.HTTPPort)
		}
	}
	for _, name := range sortedKeys(viewcountServices(t, p)) {
		_, cfg := roleConfig(t, name, p.Services[name])
		var hosts []string
		for _, u := range strings.Split(cfg.Stream.URL, ",") {
			pu, err := url.Parse(u)
			if err != nil || pu.Port() != strconv.Itoa(clientPort) {
				t.Errorf("%s: NATS_URL %s: want each server's client port %d", name, u, clientPort)
				continue
			}
			hosts = append(hosts, pu.Hostname())
		}
		sort.Strings(hosts)
		if !slices.Equal(hosts, sortedKeys(servers)) {
			t.Errorf("%s: NATS_URL names %v, want every NATS service %v (a client follows the cluster from any, but starts from these)", name, hosts, sortedKeys(servers))
		}
		if cfg.Stream.Replicas != len(servers) {
			t.Errorf("%s: --nats-replicas %d: want %d, one copy on each server", name, cfg.Stream.Replicas, len(servers))
		}
	}
}

// TestComposeClickHouse: the analyst user is read-only by its profile, with
// the limits the embedded SQL listener applies by default, and may read the
// roles' database only; the low-resource configuration keeps the system
// logs bounded; every setting named is one the engine (chDB, ClickHouse
// 26.7 like the image) knows.
func TestComposeClickHouse(t *testing.T) {
	p := composeProject(t)
	ch, ok := p.Services["clickhouse"]
	if !ok {
		t.Fatal("no clickhouse service")
	}
	if got, want := minor(imageTag(ch.Image)), minor(store.ChDBVersion); got != want {
		t.Errorf("clickhouse image %s: the embedded store is chDB %s", ch.Image, store.ChDBVersion)
	}
	users := readXML(t, bindSource(t, "clickhouse", ch, "/etc/clickhouse-server/users.d/analyst.xml"))
	config := readXML(t, bindSource(t, "clickhouse", ch, "/etc/clickhouse-server/config.d/low-resources.xml"))

	// The roles' database, from a role's DSN and the server's own.
	_, cfg := roleConfig(t, "api-1", p.Services["api-1"])
	dsn, err := url.Parse(cfg.Store.DSN)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(dsn.Path, "/")
	if v := ch.Environment["CLICKHOUSE_DB"]; v == nil || *v != db || dsn.Hostname() != "clickhouse" || dsn.Port() != "9000" {
		t.Errorf("roles' DSN %s@%s/%s, server's CLICKHOUSE_DB %v: want the clickhouse service's native port and one database", dsn.Host, dsn.Hostname(), db, ch.Environment["CLICKHOUSE_DB"])
	}

	user := users.child("users", "analyst")
	profileName := user.text("profile")
	profile := users.child("profiles", profileName)
	want := map[string]string{
		"readonly":             "1",
		"max_execution_time":   strconv.Itoa(int(store.DefaultMaxExecutionTime.Seconds())),
		"max_result_rows":      strconv.Itoa(store.DefaultMaxResultRows),
		"max_memory_usage":     strconv.Itoa(store.DefaultMaxMemoryUsage),
		"result_overflow_mode": "throw",
		// The engine's own second line behind the listener's checks.
		"allow_ddl":                                    "0",
		"allow_introspection_functions":                "0",
		"cancel_http_readonly_queries_on_client_close": "1",
	}
	for k, v := range want {
		if got := profile.text(k); got != v {
			t.Errorf("profile %q: %s = %q, want %q", profileName, k, got, v)
		}
	}
	limit := profile.child("constraints", "max_execution_time")
	if limit.text("max") != want["max_execution_time"] || limit.child("changeable_in_readonly") == nil {
		t.Errorf("profile %q: max_execution_time's constraint: want changeable_in_readonly up to %s (Grafana sets it)", profileName, want["max_execution_time"])
	}
	if got := config.child("access_control_improvements").text("settings_constraints_replace_previous"); got != "true" {
		t.Errorf("config.d: settings_constraints_replace_previous %q: changeable_in_readonly needs true", got)
	}
	if quota := user.text("quota"); quota != "" && users.child("quotas", quota) == nil {
		t.Errorf("user analyst: quota %q is not defined", quota)
	}
	var grants []string
	for _, g := range user.child("grants").Nodes {
		grants = append(grants, strings.TrimSpace(g.Text))
	}
	if !slices.Equal(grants, []string{"GRANT SELECT ON " + db + ".*"}) {
		t.Errorf("user analyst: grants %q, want SELECT on %s.* only", grants, db)
	}
	pw := user.child("password")
	if env := pw.attr("from_env"); env == "" || ch.Environment[env] == nil || *ch.Environment[env] == "" {
		t.Errorf("user analyst: password from_env %q: not set in the clickhouse service's environment", env)
	}
	// Analysts reach the server only through the api services' listener,
	// which runs what it cleared as this user; the server publishes no port.
	for _, name := range []string{"api-1", "api-2"} {
		_, cfg := roleConfig(t, name, p.Services[name])
		up, err := url.Parse(cfg.SQL.Upstream)
		if err != nil || cfg.SQL.Listen == "" || up.User.Username() != "analyst" || up.Hostname() != "clickhouse" || up.Port() != "8123" {
			t.Errorf("%s: --sql-listen %q, --sql-upstream %q: want the listener on, running queries as analyst on clickhouse:8123", name, cfg.SQL.Listen, up.Redacted())
			continue
		}
		if pass, _ := up.User.Password(); pass != *ch.Environment[pw.attr("from_env")] {
			t.Errorf("%s: --sql-upstream's password is not the analyst user's", name)
		}
	}
	if len(ch.Ports) > 0 {
		t.Errorf("clickhouse publishes %v: analysts go through the listener's checks, the operator through docker compose exec", ch.Ports)
	}

	// Every system log named is either removed or bounded by a TTL.
	logs := 0
	for _, n := range config.Nodes {
		if !strings.HasSuffix(n.XMLName.Local, "_log") {
			continue
		}
		logs++
		if n.attr("remove") != "1" && !strings.Contains(n.text("ttl"), "INTERVAL") {
			t.Errorf("config.d: %s neither removed nor given a TTL", n.XMLName.Local)
		}
	}
	if config.child("query_log") == nil || config.child("query_log").attr("remove") == "1" || logs < 10 {
		t.Errorf("config.d: %d system logs configured: want query_log kept with a TTL and the others off", logs)
	}
	if r, err := strconv.ParseFloat(config.text("max_server_memory_usage_to_ram_ratio"), 64); err != nil || r <= 0 || r >= 1 {
		t.Errorf("config.d: max_server_memory_usage_to_ram_ratio %q: want below 1", config.text("max_server_memory_usage_to_ram_ratio"))
	}

	// The engine knows every name: a misspelt setting is ignored by nobody
	// (the server refuses to start), so refuse it here first.
	var serverSettings, querySettings []string
	for _, n := range config.Nodes {
		if len(n.Nodes) == 0 && len(n.Attrs) == 0 {
			serverSettings = append(serverSettings, n.XMLName.Local)
		}
	}
	for _, n := range profile.Nodes {
		if n.XMLName.Local != "constraints" {
			querySettings = append(querySettings, n.XMLName.Local)
		}
	}
	known := knownSettings(t, serverSettings, querySettings)
	for _, name := range append(serverSettings, querySettings...) {
		if !known[name] {
			t.Errorf("ClickHouse does not know the setting %s", name)
		}
	}
	if len(serverSettings) < 5 {
		t.Errorf("config.d server settings %v: too few found", serverSettings)
	}
}

// hostPort splits a scrape target or upstream ("api-1:8082").
func hostPort(t *testing.T, where, s string) (string, string) {
	t.Helper()
	h, port, err := net.SplitHostPort(s)
	if err != nil {
		t.Fatalf("%s: %q: %v", where, s, err)
	}
	return h, port
}

var grafanaEnvRE = regexp.MustCompile(`\$\{?([A-Z][A-Z0-9_]*)\}?`)

// TestComposeGrafana: Grafana gets the provisioning and the dashboards where
// the provisioning looks for them, has the ClickHouse plugin, is given
// every variable the provisioning reads, and reads ClickHouse as the
// analyst user within the profile's time limit.
func TestComposeGrafana(t *testing.T) {
	p := composeProject(t)
	g := p.Services["grafana"]
	prov := bindSource(t, "grafana", g, "/etc/grafana/provisioning")
	var provider struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, filepath.Join(prov, "dashboards", "viewcount.yaml"), &provider)
	if len(provider.Providers) != 1 {
		t.Fatalf("dashboard providers %+v: want one", provider.Providers)
	}
	if dir, _ := filepath.Abs(filepath.Join(repoRoot, "dashboards")); bindSource(t, "grafana", g, provider.Providers[0].Options.Path) != dir {
		t.Errorf("grafana: the provider's path %s is not where dashboards/ is mounted", provider.Providers[0].Options.Path)
	}
	files, err := filepath.Glob(filepath.Join(prov, "*", "*.yaml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("provisioning files %v: %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range grafanaEnvRE.FindAllStringSubmatch(stripYAMLComments(string(b)), -1) {
			if v := g.Environment[m[1]]; v == nil || *v == "" {
				t.Errorf("%s reads $%s: not set in grafana's environment", filepath.Base(f), m[1])
			}
		}
	}
	var ds struct {
		Datasources []struct {
			Type     string            `yaml:"type"`
			JSONData map[string]any    `yaml:"jsonData"`
			Secure   map[string]string `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(prov, "datasources", "clickhouse.yaml"), &ds)
	if len(ds.Datasources) != 1 {
		t.Fatalf("ClickHouse data sources %+v: want one", ds.Datasources)
	}
	d := ds.Datasources[0]
	plugins := ""
	if v := g.Environment["GF_PLUGINS_PREINSTALL_SYNC"]; v != nil {
		plugins = *v
	}
	if !slices.Contains(strings.Split(plugins, ","), d.Type) {
		t.Errorf("grafana: GF_PLUGINS_PREINSTALL_SYNC %q: want the %s plugin", plugins, d.Type)
	}
	users := readXML(t, bindSource(t, "clickhouse", p.Services["clickhouse"], "/etc/clickhouse-server/users.d/analyst.xml"))
	user := fmt.Sprint(d.JSONData["username"])
	profile := users.child("profiles", users.child("users", user).text("profile"))
	if users.child("users", user) == nil || profile.text("readonly") != "1" {
		t.Errorf("ClickHouse data source user %q: want a readonly=1 user of users.d", user)
	}
	timeout, err := strconv.Atoi(fmt.Sprint(d.JSONData["queryTimeout"]))
	limit, _ := strconv.Atoi(profile.child("constraints", "max_execution_time").text("max"))
	if err != nil || timeout < 1 || timeout > limit {
		t.Errorf("ClickHouse data source queryTimeout %v: Grafana sets it as max_execution_time; the profile allows 1..%d", d.JSONData["queryTimeout"], limit)
	}
	if host, port := fmt.Sprint(d.JSONData["host"]), fmt.Sprint(d.JSONData["port"]); host != "clickhouse" || port != "9000" || d.JSONData["protocol"] != "native" {
		t.Errorf("ClickHouse data source %s:%s %v: want the clickhouse service's native port", host, port, d.JSONData["protocol"])
	}
}

// stripYAMLComments drops # comments, which may name variables in prose.
func stripYAMLComments(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}
