//go:build !race

package compose

import (
	"errors"
	"flag"
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

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
)

// The tests in compose*_test.go validate docker-compose.yml, the Dockerfile
// and the files under deploy/ without a Docker engine: the compose file is
// loaded by compose-go (the loader Docker Compose itself uses), every
// viewcount service's command and environment go through this binary's own
// app.ParseConfig, the NATS configuration through nats-server's own option
// parser, and every file, port, host name and setting one file names in
// another must exist there.

const repoRoot = "../.."

// composeEnv is what docker-compose.yml requires from the environment.
var composeEnv = map[string]string{
	"VIEWCOUNT_ADMIN_TOKEN":       "admintoken",
	"CLICKHOUSE_PASSWORD":         "writerpassword",
	"CLICKHOUSE_ANALYST_PASSWORD": "analystpassword",
}

// runtimeEnv are read by the Go runtime, not by app.ParseConfig.
var runtimeEnv = map[string]bool{"GOMEMLIMIT": true, "GOGC": true, "GOMAXPROCS": true}

func loadCompose(t *testing.T, env map[string]string) (*types.Project, error) {
	t.Helper()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root), cli.WithEnv(list), cli.WithResolvedPaths(true),
		cli.WithInterpolation(true), cli.WithNormalization(true), cli.WithConsistency(true))
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(t.Context())
}

func composeProject(t *testing.T) *types.Project {
	t.Helper()
	p, err := loadCompose(t, composeEnv)
	if err != nil {
		t.Fatalf("load docker-compose.yml: %v", err)
	}
	return p
}

// TestComposeRequiredEnv: without each secret the file refuses to load,
// naming it, rather than starting with an empty password.
func TestComposeRequiredEnv(t *testing.T) {
	for name := range composeEnv {
		env := map[string]string{}
		for k, v := range composeEnv {
			if k != name {
				env[k] = v
			}
		}
		if _, err := loadCompose(t, env); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("without %s: err %v, want one naming it", name, err)
		}
	}
}

// viewcountServices are the services that run this binary (built from the
// Dockerfile), by name.
func viewcountServices(t *testing.T, p *types.Project) map[string]types.ServiceConfig {
	t.Helper()
	out := map[string]types.ServiceConfig{}
	for name, s := range p.Services {
		if s.Build != nil {
			out[name] = s
		}
	}
	if len(out) == 0 {
		t.Fatal("no service builds the viewcount image")
	}
	return out
}

// subcommand checks name is one of the binary's commands: run answers its
// -h with flag.ErrHelp, an unknown command with an error of its own.
func subcommand(t *testing.T, name string) string {
	t.Helper()
	usage, err := captureStderr(t, func() error { return app.Run([]string{name, "-h"}, io.Discard, io.Discard) })
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("viewcount %s -h: %v, want the flags' help: not a subcommand", name, err)
	}
	return usage
}

// captureStderr runs f with os.Stderr sent to a file, where a FlagSet
// without an output of its own prints its usage.
func captureStderr(t *testing.T, f func() error) (string, error) {
	t.Helper()
	tmp, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	old := os.Stderr
	os.Stderr = tmp
	ferr := f()
	os.Stderr = old
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), ferr
}

var envInUsage = regexp.MustCompile(`\(env ([A-Z][A-Z0-9_]*)\)`)

// roleConfig parses service s's command and environment as the binary
// would in its container: the environment holds exactly the service's
// variables of those app.ParseConfig reads. It returns the role and Config.
func roleConfig(t *testing.T, name string, s types.ServiceConfig) (string, app.Config) {
	t.Helper()
	if len(s.Entrypoint) > 0 {
		t.Errorf("%s: entrypoint %v: the image's (the binary) is expected", name, s.Entrypoint)
	}
	if len(s.Command) == 0 {
		t.Fatalf("%s: no command", name)
	}
	role := s.Command[0]
	read := map[string]bool{}
	for _, m := range envInUsage.FindAllStringSubmatch(subcommand(t, role), -1) {
		read[m[1]] = true
	}
	if len(read) < 10 {
		t.Fatalf("%s: the flags of viewcount %s name %d environment variables: usage not captured", name, role, len(read))
	}
	for k := range s.Environment {
		if !read[k] && !runtimeEnv[k] {
			t.Errorf("%s: environment variable %s is read by no flag of viewcount %s", name, k, role)
		}
	}
	for k := range read {
		t.Setenv(k, "") // restored when the test ends
		if v, ok := s.Environment[k]; ok && v != nil {
			t.Setenv(k, *v)
		} else if err := os.Unsetenv(k); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := app.ParseConfig(role, s.Command[1:])
	if err != nil {
		t.Fatalf("%s: viewcount %s: %v", name, strings.Join(s.Command, " "), err)
	}
	return role, cfg
}

func listenPort(t *testing.T, name, listen string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" || port == "0" {
		t.Fatalf("%s: --listen %q: want a fixed port", name, listen)
	}
	return port
}

// TestComposeViewcountServices: every role service's command and variables
// are the binary's, its health check asks its own listener, and the
// services together are a cluster deployment: external NATS and ClickHouse,
// the stream replicated, each role at least twice, the validators' explicit
// partitions covering the stream once.
func TestComposeViewcountServices(t *testing.T) {
	p := composeProject(t)
	entry := dockerfileEntrypoint(t)
	roles := map[string][]string{}
	var owned []int
	partitions := 0
	for _, name := range sortedKeys(viewcountServices(t, p)) {
		s := p.Services[name]
		role, cfg := roleConfig(t, name, s)
		roles[role] = append(roles[role], name)
		if cfg.Stream.URL == "" || (role != "ingest" && cfg.Store.DSN == "") {
			t.Errorf("%s: NATS_URL %q, CLICKHOUSE_DSN %q: a role on its own needs the servers (the embedded ones allow one process)", name, cfg.Stream.URL, cfg.Store.DSN)
		}
		if role == "serve" {
			t.Errorf("%s: serve runs every role on embedded servers: one process per data dir, not a compose service", name)
		}
		if role == "validate" {
			if cfg.Stream.Partitions == 0 || cfg.Validate.Partitions == nil {
				t.Errorf("%s: --partitions %d, --validate-partitions %v: give both, so validators split the stream", name, cfg.Stream.Partitions, cfg.Validate.Partitions)
			}
			owned = append(owned, cfg.Validate.Partitions...)
			partitions = cfg.Stream.Partitions
		}
		checkMemory(t, name, s)
		port := listenPort(t, name, cfg.Listen)
		hc := s.HealthCheck
		if hc == nil || hc.Disable || len(hc.Test) != 4 || hc.Test[0] != "CMD" || hc.Test[1] != entry || hc.Test[2] != "health" {
			t.Errorf("%s: health check %v: want [CMD %s health URL]", name, hc, entry)
			continue
		}
		subcommand(t, "health")
		u, err := url.Parse(hc.Test[3])
		if err != nil || u.Port() != port || !slices.Contains([]string{"/readyz", "/healthz"}, u.Path) {
			t.Errorf("%s: health check URL %q: want /readyz or /healthz on the listen port %s", name, hc.Test[3], port)
		}
	}
	for _, role := range []string{"ingest", "validate", "api"} {
		if len(roles[role]) < 2 {
			t.Errorf("role %s runs in %v: want at least 2 processes", role, roles[role])
		}
	}
	sort.Ints(owned)
	for i, part := range owned {
		if part != i || len(owned) != partitions {
			t.Errorf("validators own partitions %v: want each of 0..%d exactly once", owned, partitions-1)
			break
		}
	}
}

// TestComposeFiles: every file a service mounts or builds from exists,
// and no two services publish the same host port.
func TestComposeFiles(t *testing.T) {
	p := composeProject(t)
	root, _ := filepath.Abs(repoRoot)
	published := map[string]string{}
	for _, name := range sortedKeys(p.Services) {
		s := p.Services[name]
		if b := s.Build; b != nil {
			if b.DockerfileInline != "" {
				t.Errorf("%s: dockerfile_inline: build from the Dockerfile", name)
			}
			if b.Context != root || filepath.Base(b.Dockerfile) != "Dockerfile" {
				t.Errorf("%s: build context %q, Dockerfile %q: want the repository's root and its Dockerfile", name, b.Context, b.Dockerfile)
			}
			mustExist(t, name, filepath.Join(b.Context, b.Dockerfile))
		}
		for _, v := range s.Volumes {
			switch v.Type {
			case types.VolumeTypeBind:
				if !strings.HasPrefix(v.Source, root+string(filepath.Separator)) {
					t.Errorf("%s: bind mount %s: outside the repository", name, v.Source)
				}
				mustExist(t, name, v.Source)
				if !v.ReadOnly {
					t.Errorf("%s: bind mount %s: mount the repository's files read-only", name, v.Source)
				}
			case types.VolumeTypeVolume:
				if _, ok := p.Volumes[v.Source]; !ok {
					t.Errorf("%s: volume %q is not declared", name, v.Source)
				}
			}
		}
		for _, port := range s.Ports {
			key := port.Published + "/" + port.Protocol
			if other, ok := published[key]; ok {
				t.Errorf("host port %s published by %s and %s", key, other, name)
			}
			published[key] = name
		}
	}
	if len(published) == 0 {
		t.Error("no port published")
	}
	for name, c := range p.Configs {
		if c.File != "" {
			mustExist(t, "config "+name, c.File)
		}
	}
	for name, c := range p.Secrets {
		if c.File != "" {
			mustExist(t, "secret "+name, c.File)
		}
	}
}

func mustExist(t *testing.T, service, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s: %v", service, err)
	}
}

// bindSource is the repository file that service s mounts at target.
func bindSource(t *testing.T, name string, s types.ServiceConfig, target string) string {
	t.Helper()
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && v.Target == target {
			return v.Source
		}
	}
	t.Fatalf("%s: nothing mounted at %s", name, target)
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkMemory: a role with a memory limit keeps Go's heap under it
// (GOMEMLIMIT below the limit), so the garbage collector works harder
// before the kernel's OOM killer ends the process.
func checkMemory(t *testing.T, name string, s types.ServiceConfig) {
	t.Helper()
	if s.Deploy == nil || s.Deploy.Resources.Limits == nil || s.Deploy.Resources.Limits.MemoryBytes == 0 {
		t.Errorf("%s: no memory limit (deploy.resources.limits.memory)", name)
		return
	}
	limit := int64(s.Deploy.Resources.Limits.MemoryBytes)
	v := s.Environment["GOMEMLIMIT"]
	m := regexp.MustCompile(`^(\d+)(B|KiB|MiB|GiB)$`).FindStringSubmatch(deref(v))
	if m == nil {
		t.Errorf("%s: GOMEMLIMIT %q: want e.g. 400MiB, below the limit of %d bytes", name, deref(v), limit)
		return
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	n <<= map[string]int{"B": 0, "KiB": 10, "MiB": 20, "GiB": 30}[m[2]]
	if n >= limit*9/10 {
		t.Errorf("%s: GOMEMLIMIT %s is not below 90%% of the memory limit (%d bytes): leave room for what Go does not count", name, *v, limit)
	}
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
