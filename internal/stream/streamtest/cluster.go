package streamtest

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster is n real NATS servers with JetStream, clustered over loopback
// routes, each with its own store dir: what NATS_URL points at in a
// deployment that runs past one machine. A test stops a node (Stop) and
// brings it back on the same ports and files (Restart), as an operator's
// restart would.
type Cluster struct {
	t     testing.TB
	opts  []*server.Options // each node's, cloned for every start
	urls  []string
	mu    sync.Mutex
	nodes []*server.Server // nil while stopped
}

// clusterName is the NATS cluster's name (route handshakes check it).
const clusterName = "viewcount-test"

// StartCluster starts n clustered servers and returns once JetStream has a
// meta leader and every node is current, so a stream with n replicas can
// be created at once. Every node is shut down at cleanup.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	// Fixed ports, not -1: the routes name every node's cluster port
	// up front, and a restarted node must come back where clients and
	// routes look for it.
	ports := freePorts(t, 2*n)
	routes := make([]string, n)
	for i := range n {
		routes[i] = "nats://127.0.0.1:" + strconv.Itoa(ports[n+i])
	}
	c := &Cluster{t: t, nodes: make([]*server.Server, n)}
	for i := range n {
		c.opts = append(c.opts, &server.Options{
			ServerName: "n" + strconv.Itoa(i),
			Host:       "127.0.0.1", Port: ports[i],
			JetStream: true, StoreDir: t.TempDir(),
			Cluster: server.ClusterOpts{Name: clusterName, Host: "127.0.0.1", Port: ports[n+i]},
			// Every node's route, its own included: a server drops the
			// route to itself, as in a shared configuration file.
			Routes: server.RoutesFromStr(strings.Join(routes, ",")),
			NoLog:  true, NoSigs: true,
		})
		c.urls = append(c.urls, "nats://127.0.0.1:"+strconv.Itoa(ports[i]))
	}
	t.Cleanup(c.shutdown)
	for i := range n {
		c.start(i)
	}
	c.WaitReady()
	return c
}

func freePorts(t testing.TB, n int) []int {
	t.Helper()
	ports := make([]int, n)
	lns := make([]net.Listener, n)
	for i := range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("streamtest: free port: %v", err)
		}
		lns[i], ports[i] = ln, ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

func (c *Cluster) start(i int) {
	c.t.Helper()
	s, err := server.NewServer(c.opts[i].Clone())
	if err != nil {
		c.t.Fatalf("streamtest: node %d: %v", i, err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		c.t.Fatalf("streamtest: node %d not ready", i)
	}
	c.mu.Lock()
	c.nodes[i] = s
	c.mu.Unlock()
}

// URL is every node's client URL, comma-separated, as NATS_URL takes them.
func (c *Cluster) URL() string { return strings.Join(c.urls, ",") }

// NodeURL is node i's client URL.
func (c *Cluster) NodeURL(i int) string { return c.urls[i] }

// Node returns node i's index by its server name (what a client's
// ConnectedServerName reports), -1 if none has it.
func (c *Cluster) Node(name string) int {
	for i, o := range c.opts {
		if o.ServerName == name {
			return i
		}
	}
	return -1
}

// Stop shuts node i down and waits until it is gone: its clients lose
// their connection, and its replicas fall behind until Restart.
func (c *Cluster) Stop(i int) {
	c.mu.Lock()
	s := c.nodes[i]
	c.nodes[i] = nil
	c.mu.Unlock()
	if s != nil {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// Restart starts a stopped node i again on its ports and store dir and
// waits until the cluster counts it current again.
func (c *Cluster) Restart(i int) {
	c.t.Helper()
	c.start(i)
	c.WaitReady()
}

// WaitReady waits until JetStream has a meta leader that sees every
// running node and every running node is current with it.
func (c *Cluster) WaitReady() {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c.mu.Lock()
		running := 0
		var leader *server.Server
		current := true
		for _, s := range c.nodes {
			if s == nil {
				continue
			}
			running++
			if s.JetStreamIsLeader() {
				leader = s
			}
			current = current && s.JetStreamIsCurrent()
		}
		ok := leader != nil && current && len(leader.JetStreamClusterPeers()) == running
		c.mu.Unlock()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("streamtest: cluster not ready within a minute (leader %v, all current %v)", leader != nil, current)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) shutdown() {
	for i := range c.nodes {
		c.Stop(i)
	}
}
