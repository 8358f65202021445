//go:build !race

package compose

import (
	"encoding/xml"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/internal/httpserve"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// xmlNode is any element of a ClickHouse configuration file.
type xmlNode struct {
	XMLName xml.Name
	Attrs   []xml.Attr `xml:",any,attr"`
	Text    string     `xml:",chardata"`
	Nodes   []xmlNode  `xml:",any"`
}

func readXML(t *testing.T, path string) *xmlNode {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var n xmlNode
	if err := xml.Unmarshal(b, &n); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if n.XMLName.Local != "clickhouse" {
		t.Fatalf("%s: root <%s>, want <clickhouse>", path, n.XMLName.Local)
	}
	return &n
}

// child follows a path of element names; nil when one is missing (a nil
// node answers "" and nil to everything, so a chain reports its end).
func (n *xmlNode) child(path ...string) *xmlNode {
	for _, name := range path {
		if n == nil {
			return nil
		}
		var next *xmlNode
		for i := range n.Nodes {
			if n.Nodes[i].XMLName.Local == name {
				next = &n.Nodes[i]
			}
		}
		n = next
	}
	return n
}

func (n *xmlNode) text(name string) string {
	if c := n.child(name); c != nil {
		return strings.TrimSpace(c.Text)
	}
	return ""
}

func (n *xmlNode) attr(name string) string {
	if n == nil {
		return ""
	}
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// knownSettings asks the engine which of the names are server settings or
// query settings. Test-only SQL over the engine's own tables.
func knownSettings(t *testing.T, server, query []string) map[string]bool {
	t.Helper()
	st := storetest.Open(t)
	res, err := st.Query(t.Context(), "SELECT name FROM system.server_settings WHERE name IN {server:Array(String)} "+
		"UNION ALL SELECT name FROM system.settings WHERE name IN {query:Array(String)}",
		store.Params{"server": store.ArrayParam(server), "query": store.ArrayParam(query)})
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, row := range res.TextRows() {
		known[row[0]] = true
	}
	return known
}

// TestComposePrometheus: Prometheus scrapes every role process on the port
// it listens on, and the ClickHouse server on its metrics port, at the
// interval the Prometheus data source assumes.
func TestComposePrometheus(t *testing.T) {
	p := composeProject(t)
	prom := p.Services["prometheus"]
	if !slices.Contains(prom.Command, "--config.file=/etc/prometheus/prometheus.yml") {
		t.Errorf("prometheus: command %v: want --config.file=/etc/prometheus/prometheus.yml", prom.Command)
	}
	var doc struct {
		Global struct {
			ScrapeInterval string `yaml:"scrape_interval"`
		} `yaml:"global"`
		ScrapeConfigs []struct {
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, bindSource(t, "prometheus", prom, "/etc/prometheus/prometheus.yml"), &doc)
	ports := map[string]string{} // service → the port it serves /metrics on
	for name, s := range viewcountServices(t, p) {
		_, cfg := roleConfig(t, name, s)
		ports[name] = listenPort(t, name, cfg.Listen)
	}
	ch := p.Services["clickhouse"]
	ports["clickhouse"] = readXML(t, bindSource(t, "clickhouse", ch, "/etc/clickhouse-server/config.d/low-resources.xml")).child("prometheus").text("port")
	scraped := map[string]bool{}
	for _, sc := range doc.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				host, port := hostPort(t, "prometheus.yml", target)
				if want, ok := ports[host]; !ok || port != want {
					t.Errorf("prometheus.yml: target %s: want a service that serves metrics (%v)", target, ports)
				}
				scraped[host] = true
			}
		}
	}
	for name := range ports {
		if !scraped[name] {
			t.Errorf("prometheus.yml: %s is not scraped", name)
		}
	}
	var ds struct {
		Datasources []struct {
			URL      string         `yaml:"url"`
			JSONData map[string]any `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	readYAML(t, repoRoot+"/dashboards/provisioning/datasources/prometheus.yaml", &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].JSONData["timeInterval"] != doc.Global.ScrapeInterval {
		t.Errorf("Prometheus data source %+v: timeInterval must be the scrape interval %s", ds.Datasources, doc.Global.ScrapeInterval)
	} else if u, err := url.Parse(ds.Datasources[0].URL); err != nil || u.Hostname() != "prometheus" || u.Port() != "9090" {
		t.Errorf("Prometheus data source URL %s: want the prometheus service's port 9090", ds.Datasources[0].URL)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var caddyEnvRE = regexp.MustCompile(`\{\$([A-Z0-9_]+)`)

// TestComposeLoadBalancer: Caddy sends every ingest route (as ingest
// registers them) to every ingest service and everything else to every api
// service, on their listen ports, checks each on /readyz, hides /metrics,
// and is the one proxy the ingest services trust for X-Forwarded-For.
func TestComposeLoadBalancer(t *testing.T) {
	p := composeProject(t)
	lb := p.Services["lb"]
	b, err := os.ReadFile(bindSource(t, "lb", lb, "/etc/caddy/Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	caddyfile := string(b)
	for _, m := range caddyEnvRE.FindAllStringSubmatch(caddyfile, -1) {
		if lb.Environment[m[1]] == nil {
			t.Errorf("Caddyfile reads {$%s}: not in the lb service's environment", m[1])
		}
	}
	byRole := map[string][]string{}
	listen := map[string]string{}
	var ingestCfgs []app.Config
	for name, s := range viewcountServices(t, p) {
		role, cfg := roleConfig(t, name, s)
		byRole[role] = append(byRole[role], name)
		listen[name] = listenPort(t, name, cfg.Listen)
		if role == "ingest" {
			ingestCfgs = append(ingestCfgs, cfg)
		}
	}
	// Upstreams per handle block: "handle @ingest {" then its reverse_proxy.
	upstreams := map[string][]string{}
	var matcherPaths []string
	block, healthURIs, hidesMetrics := "", 0, false
	for _, line := range strings.Split(caddyfile, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "#"):
		case f[0] == "@ingest" && len(f) > 2 && f[1] == "path":
			matcherPaths = f[2:]
		case f[0] == "handle":
			block = strings.TrimSuffix(strings.Join(f[1:], " "), "{")
			block = strings.TrimSpace(block)
		case len(f) == 3 && f[0] == "respond" && f[1] == "/metrics" && f[2] == "404":
			hidesMetrics = block == "" && len(upstreams[""]) == 0
		case f[0] == "reverse_proxy":
			for _, u := range f[1:] {
				if u == "{" {
					break
				}
				host, port := hostPort(t, "Caddyfile", u)
				if listen[host] != port {
					t.Errorf("Caddyfile: upstream %s: want a role service on its listen port", u)
				}
				upstreams[block] = append(upstreams[block], host)
			}
		case f[0] == "health_uri":
			healthURIs++
			if f[1] != "/readyz" {
				t.Errorf("Caddyfile: health_uri %s: want /readyz", f[1])
			}
		}
	}
	for block, role := range map[string]string{"@ingest": "ingest", "": "api"} {
		sort.Strings(upstreams[block])
		sort.Strings(byRole[role])
		if !slices.Equal(upstreams[block], byRole[role]) {
			t.Errorf("Caddyfile: handle %q proxies to %v, want every %s service %v", block, upstreams[block], role, byRole[role])
		}
	}
	if healthURIs != len(upstreams) {
		t.Errorf("Caddyfile: %d health_uri for %d upstream groups", healthURIs, len(upstreams))
	}
	// Outside the catch-all, a respond (or a handle /metrics block) is
	// tried after it (checked with `caddy adapt`): only within it does
	// respond come before reverse_proxy.
	if !hidesMetrics {
		t.Error("Caddyfile: the catch-all handle block must answer /metrics with 404 (respond /metrics 404 in it), never proxy it")
	}

	// The routes ingest registers, "*name" wildcards as Caddy writes them.
	engine, err := httpserve.NewEngine(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ingest.New(ingest.Config{}, nil, nil, nil, slog.New(slog.DiscardHandler), nil).Routes(engine)
	var routes []string
	for _, r := range engine.Routes() {
		path := regexp.MustCompile(`\*\w+$`).ReplaceAllString(r.Path, "*")
		if !slices.Contains(routes, path) {
			routes = append(routes, path)
		}
	}
	sort.Strings(routes)
	sort.Strings(matcherPaths)
	if !slices.Equal(routes, matcherPaths) {
		t.Errorf("Caddyfile: @ingest matches %v, ingest serves %v", matcherPaths, routes)
	}

	// The lb's fixed address is the one trusted proxy of each ingest.
	var addr string
	for _, n := range lb.Networks {
		if n != nil {
			addr = n.Ipv4Address
		}
	}
	ip := net.ParseIP(addr)
	if ip == nil {
		t.Fatalf("lb: ipv4_address %q: want a fixed address for the ingest services to trust", addr)
	}
	inSubnet := false
	for _, pool := range p.Networks["default"].Ipam.Config {
		_, subnet, err := net.ParseCIDR(pool.Subnet)
		inSubnet = inSubnet || err == nil && subnet.Contains(ip)
	}
	if !inSubnet {
		t.Errorf("lb: %s is outside the default network's subnets", addr)
	}
	for i, cfg := range ingestCfgs {
		trusted := false
		for _, c := range cfg.Ingest.TrustedProxies {
			if _, n, err := net.ParseCIDR(c); err == nil {
				ones, bits := n.Mask.Size()
				trusted = trusted || n.Contains(ip) && ones == bits
			}
		}
		if !trusted || len(cfg.Ingest.TrustedProxies) != 1 {
			t.Errorf("ingest %d: --trusted-proxies %v: want the lb's address %s alone", i, cfg.Ingest.TrustedProxies, addr)
		}
	}
	published := map[string]bool{}
	for _, port := range lb.Ports {
		published[strconv.Itoa(int(port.Target))] = true
	}
	if !published["80"] || !published["443"] {
		t.Errorf("lb publishes %v: want 80 and 443", lb.Ports)
	}
}
