//go:build faults

package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/viewcount/viewcount/sql/store"
)

const adminToken = "faults-admin-token"

// binaries builds viewcount (with the store fault hook) and nats-server
// once per test binary.
var binaries struct {
	once     sync.Once
	dir      string
	err      error
	natsOnce sync.Once
	natsErr  error
}

func viewcountBin(t *testing.T) string {
	t.Helper()
	binaries.once.Do(func() {
		binaries.dir, binaries.err = os.MkdirTemp("", "viewcount-faults-bin-")
		if binaries.err != nil {
			return
		}
		binaries.err = goBuild(filepath.Join(binaries.dir, "viewcount"), "-tags", "faults", "github.com/viewcount/viewcount/cmd/viewcount")
	})
	if binaries.err != nil {
		t.Fatalf("build viewcount: %v", binaries.err)
	}
	return filepath.Join(binaries.dir, "viewcount")
}

func natsBin(t *testing.T) string {
	t.Helper()
	viewcountBin(t)
	binaries.natsOnce.Do(func() {
		binaries.natsErr = goBuild(filepath.Join(binaries.dir, "nats-server"), "github.com/nats-io/nats-server/v2")
	})
	if binaries.natsErr != nil {
		t.Fatalf("build nats-server: %v", binaries.natsErr)
	}
	return filepath.Join(binaries.dir, "nats-server")
}

func goBuild(out string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build", "-o", out}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %v: %w\n%s", args, err, b)
	}
	return nil
}

// freePort returns a loopback port nothing listens on now, so a child can
// be restarted on the same address and the load keeps its URL.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// child is one `viewcount serve` process on a data dir, restartable.
type child struct {
	t        *testing.T
	bin      string
	data     string
	faultDir string
	port     int
	natsURL  string
	nofile   int // descriptor limit of the process; 0 = inherited
	logPath  string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
	starts int
}

func newChild(t *testing.T, data, dir string) *child {
	c := &child{t: t, bin: viewcountBin(t), data: data, faultDir: filepath.Join(dir, "faults"),
		port: freePort(t), logPath: filepath.Join(dir, "serve.log")}
	if err := os.MkdirAll(c.faultDir, 0o750); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.kill9)
	return c
}

func (c *child) base() string { return "http://127.0.0.1:" + strconv.Itoa(c.port) }

// start execs the child and returns at once; ready waits for it to serve.
func (c *child) start() {
	c.t.Helper()
	args := []string{"serve", "--listen", "127.0.0.1:" + strconv.Itoa(c.port), "--data", c.data,
		"--admin-token", adminToken, "--trusted-proxies", "127.0.0.1/32",
		"--settle-window=-1s", "--public-lag", "1s"}
	name := c.bin
	if c.nofile > 0 {
		// ulimit in sh sets the soft and the hard limit, so a process that
		// raises its soft limit to the hard one still runs under this.
		args = append([]string{"-c", `ulimit -n ` + strconv.Itoa(c.nofile) + ` && exec "$0" "$@"`, c.bin}, args...)
		name = "/bin/sh"
	}
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), store.FaultDirEnv+"="+c.faultDir)
	if c.natsURL != "" {
		cmd.Env = append(cmd.Env, "NATS_URL="+c.natsURL)
	}
	logf, err := os.OpenFile(c.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		c.t.Fatal(err)
	}
	fmt.Fprintf(logf, "=== start %d at %s\n", c.starts+1, time.Now().UTC().Format(time.RFC3339Nano))
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		c.t.Fatalf("start viewcount: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	c.mu.Lock()
	c.cmd, c.exited = cmd, exited
	c.starts++
	c.mu.Unlock()
}

// running reports whether the current process has not exited.
func (c *child) running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exited == nil {
		return false
	}
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// ready polls /readyz until 200, failing the test after d.
func (c *child) ready(d time.Duration) {
	c.t.Helper()
	if err := c.waitReady(d); err != nil {
		c.t.Fatalf("%v\n%s", err, c.logTail(30))
	}
}

func (c *child) waitReady(d time.Duration) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(d)
	for {
		if !c.running() {
			return errors.New("viewcount exited before it was ready")
		}
		resp, err := hc.Get(c.base() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("viewcount not ready within %s (last: %v)", d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill9 kills the process without a chance to clean up and waits for it.
func (c *child) kill9() {
	c.mu.Lock()
	cmd, exited := c.cmd, c.exited
	c.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// stop asks for a graceful shutdown (SIGTERM) and reports whether the
// process exited by itself within d; if not, it is killed.
func (c *child) stop(d time.Duration) bool {
	c.mu.Lock()
	cmd, exited := c.cmd, c.exited
	c.mu.Unlock()
	if cmd == nil {
		return true
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return true
	case <-time.After(d):
		c.kill9()
		return false
	}
}

// restart stops the process gracefully (killing it if it hangs), starts
// it again on the same data dir and waits until it is ready.
func (c *child) restart() {
	c.t.Helper()
	if !c.stop(30 * time.Second) {
		c.t.Logf("viewcount did not stop within 30s of SIGTERM: killed")
	}
	c.start()
	c.ready(2 * time.Minute)
}

// setFault creates or removes a control file of the store fault hook.
func (c *child) setFault(name string, on bool) {
	c.t.Helper()
	p := filepath.Join(c.faultDir, name)
	var err error
	if on {
		err = os.WriteFile(p, nil, 0o640)
	} else if err = os.Remove(p); errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

// logTail is the end of the child's log, for failure messages.
func (c *child) logTail(n int) string {
	lines := c.logLines()
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errorLines are the child's log lines at level ERROR, the first n.
func (c *child) errorLines(n int) []string {
	var out []string
	for _, l := range c.logLines() {
		if strings.Contains(l, "level=ERROR") && len(out) < n {
			out = append(out, l)
		}
	}
	return out
}

func (c *child) logLines() []string {
	f, err := os.Open(c.logPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

// natsServer is an external nats-server with JetStream on a directory,
// restartable on the same port and files.
type natsServer struct {
	t    *testing.T
	bin  string
	dir  string
	port int

	cmd    *exec.Cmd
	exited chan struct{}
}

func startNATS(t *testing.T, dir string) *natsServer {
	t.Helper()
	n := &natsServer{t: t, bin: natsBin(t), dir: dir, port: freePort(t)}
	n.start()
	t.Cleanup(func() { n.signal(syscall.SIGCONT); n.signal(syscall.SIGKILL); n.wait(10 * time.Second) })
	return n
}

func (n *natsServer) url() string { return "nats://127.0.0.1:" + strconv.Itoa(n.port) }

func (n *natsServer) start() {
	n.t.Helper()
	cmd := exec.Command(n.bin, "-a", "127.0.0.1", "-p", strconv.Itoa(n.port), "-js", "-sd", n.dir)
	logf, err := os.OpenFile(filepath.Join(n.dir, "..", "nats.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("start nats-server: %v", err)
	}
	n.cmd, n.exited = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); logf.Close(); close(done) }(n.exited)
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(n.port), time.Second)
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nats-server not listening within 30s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (n *natsServer) signal(sig syscall.Signal) {
	if n.cmd != nil && n.cmd.Process != nil {
		_ = n.cmd.Process.Signal(sig)
	}
}

func (n *natsServer) wait(d time.Duration) bool {
	select {
	case <-n.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
