//go:build !race

package compose

import (
	"context"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/internal/stream"
)

// TestComposeNATSClusterRuns runs the three NATS services of
// docker-compose.yml in-process from their own command lines and
// deploy/nats/nats.conf, with only what Docker provides replaced (host
// names and ports: loopback and free ports; the data volume: a temp dir),
// and opens the stream on them the way every role does, with the roles'
// --nats-replicas and --partitions. A configuration JetStream cannot
// cluster on (names, limits, the cluster block) fails here, not on an
// operator's first `docker compose up`.
func TestComposeNATSClusterRuns(t *testing.T) {
	p := composeProject(t)
	_, cfg := roleConfig(t, "api-1", p.Services["api-1"])
	var names []string
	for _, name := range sortedKeys(p.Services) {
		if strings.HasPrefix(p.Services[name].Image, "nats:") {
			names = append(names, name)
		}
	}
	// Each server's route port, known before any starts: as in the file,
	// every server is given the routes to all.
	clusterPort := map[string]int{}
	var routes []*url.URL
	for _, name := range names {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		clusterPort[name] = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		routes = append(routes, &url.URL{Scheme: "nats-route", Host: ln.Addr().String()})
	}
	var urls []string
	var servers []*natsserver.Server
	for _, name := range names {
		o := natsOptions(t, name, p.Services[name])
		o.Host, o.Port, o.HTTPPort = "127.0.0.1", -1, 0
		o.Cluster.Host, o.Cluster.Port = "127.0.0.1", clusterPort[name]
		o.Routes = routes
		o.StoreDir = t.TempDir()
		o.NoLog, o.NoSigs = true, true
		srv, err := natsserver.NewServer(o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		srv.Start()
		t.Cleanup(srv.Shutdown)
		if !srv.ReadyForConnections(10 * time.Second) {
			t.Fatalf("%s: not ready", name)
		}
		urls = append(urls, srv.ClientURL())
		servers = append(servers, srv)
	}
	// As the services' health checks make the roles wait (/healthz: a
	// meta leader, every server current): a JetStream request sent during
	// the election can go unanswered.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		leader, current := false, true
		for _, srv := range servers {
			leader = leader || srv.JetStreamIsLeader() && len(srv.JetStreamClusterPeers()) == len(servers)
			current = current && srv.JetStreamIsCurrent()
		}
		if leader && current {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no JetStream meta leader with %d current peers within 30s", len(servers))
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := stream.Open(ctx, stream.Config{URL: strings.Join(urls, ","), Partitions: cfg.Stream.Partitions,
		Replicas: cfg.Stream.Replicas, DataDir: t.TempDir()}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("open the stream on the compose NATS cluster: %v", err)
	}
	defer conn.Close()
	info, err := conn.JS.Stream(ctx, viewcount.StreamName)
	if err != nil {
		t.Fatal(err)
	}
	si, err := info.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if si.Config.Replicas != cfg.Stream.Replicas || si.Cluster == nil || len(si.Cluster.Replicas) != cfg.Stream.Replicas-1 {
		t.Errorf("stream VIEWS: %d replicas configured, cluster %+v: want %d copies", si.Config.Replicas, si.Cluster, cfg.Stream.Replicas)
	}
}
