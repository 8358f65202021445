//go:build !race

package compose

import (
	"bufio"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/cmd/viewcount/app"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case
	args string
}

func parseDockerfile(t *testing.T) []instruction {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if more, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur.Reset()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// execForm reads an instruction's JSON array form (["/viewcount", "health"]).
func execForm(t *testing.T, in instruction, args string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil || len(argv) == 0 {
		t.Fatalf("%s %s: want the exec (JSON array) form", in.cmd, in.args)
	}
	return argv
}

// dockerfileEntrypoint is the binary's path in the image.
func dockerfileEntrypoint(t *testing.T) string {
	t.Helper()
	var entry []string
	for _, in := range parseDockerfile(t) {
		if in.cmd == "ENTRYPOINT" {
			entry = execForm(t, in, in.args)
		}
	}
	if len(entry) != 1 {
		t.Fatalf("Dockerfile ENTRYPOINT %v: want the binary alone", entry)
	}
	return entry[0]
}

// TestDockerfile: a multi-stage build whose COPY sources exist (and are
// not excluded by .dockerignore), on the Go version go.mod names, whose
// last stage runs the binary as a non-root user with a health check the
// binary answers on the port it listens on.
func TestDockerfile(t *testing.T) {
	ins := parseDockerfile(t)
	ignored := dockerignore(t)
	var stages []string
	binaries := map[string]bool{} // COPY destinations of the last stage
	var user string
	env := map[string]string{} // of the last stage
	var health []string
	var exposed []string
	for _, in := range ins {
		f := strings.Fields(in.args)
		switch in.cmd {
		case "FROM":
			binaries = map[string]bool{}
			env = map[string]string{}
			user = ""
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				stages = append(stages, f[2])
			} else {
				stages = append(stages, "")
			}
			if img, ok := strings.CutPrefix(f[0], "golang:"); ok && img != goModVersion(t) {
				t.Errorf("FROM %s: go.mod says go %s", f[0], goModVersion(t))
			}
		case "COPY":
			var from string
			var paths []string
			for _, a := range f {
				if v, ok := strings.CutPrefix(a, "--from="); ok {
					from = v
				} else if !strings.HasPrefix(a, "--") {
					paths = append(paths, a)
				}
			}
			if len(paths) < 2 {
				t.Fatalf("COPY %s: want sources and a destination", in.args)
			}
			dst := paths[len(paths)-1]
			binaries[dst] = true
			if from != "" {
				if !slices.Contains(stages[:len(stages)-1], from) {
					t.Errorf("COPY --from=%s: no earlier stage of that name (stages %v)", from, stages)
				}
				continue
			}
			for _, src := range paths[:len(paths)-1] {
				mustExist(t, "Dockerfile", filepath.Join(repoRoot, src))
				if src != "." && ignored(src) {
					t.Errorf("COPY %s: .dockerignore excludes it", src)
				}
			}
		case "USER":
			user = f[0]
		case "ENV":
			for _, kv := range f {
				k, v, _ := strings.Cut(kv, "=")
				env[k] = v
			}
		case "EXPOSE":
			exposed = f
		case "HEALTHCHECK":
			_, cmd, ok := strings.Cut(in.args, "CMD ")
			if !ok {
				t.Fatalf("HEALTHCHECK %s: no CMD", in.args)
			}
			health = execForm(t, in, cmd)
		}
	}
	if len(stages) < 2 {
		t.Errorf("stages %v: want a build stage and a run stage", stages)
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0:") || user == "0" {
		t.Errorf("last stage runs as %q: want a non-root user", user)
	}
	entry := dockerfileEntrypoint(t)
	if !binaries[entry] {
		t.Errorf("ENTRYPOINT %s: the last stage copies no file there", entry)
	}
	if len(health) != 2 || health[0] != entry || health[1] != "health" {
		t.Errorf("HEALTHCHECK CMD %v: want [%s health]", health, entry)
	}
	read := map[string]bool{}
	for _, m := range envInUsage.FindAllStringSubmatch(subcommand(t, "serve"), -1) {
		read[m[1]] = true
	}
	for k, v := range env {
		if !read[k] && !runtimeEnv[k] {
			t.Errorf("ENV %s: no flag of the binary reads it", k)
		}
		// A path the image gives a flag is one the last stage copies in.
		copied := false
		for dst := range binaries {
			copied = copied || v == dst || strings.HasPrefix(v, strings.TrimSuffix(dst, "/")+"/")
		}
		if strings.HasPrefix(v, "/") && !copied {
			t.Errorf("ENV %s=%s: the last stage copies nothing there", k, v)
		}
	}
	listen := env["VIEWCOUNT_LISTEN"]
	subcommand(t, "health")
	// The health check asks the address VIEWCOUNT_LISTEN names; whether
	// anything answers there on this machine is not this test's concern,
	// only that the command makes a URL of it.
	t.Setenv("VIEWCOUNT_LISTEN", listen)
	asked := app.Run([]string{"health", "--timeout", "1s"}, io.Discard, io.Discard)
	if asked != nil && strings.Contains(asked.Error(), "VIEWCOUNT_LISTEN") {
		t.Fatalf("ENV VIEWCOUNT_LISTEN=%q: %v", listen, asked)
	}
	if port := listenPort(t, "Dockerfile", listen); !slices.Contains(exposed, port) {
		t.Errorf("EXPOSE %v: not the port of VIEWCOUNT_LISTEN %s (health: %v)", exposed, listen, asked)
	}
	// What the build compiles must reach it: every Go file and every
	// file a go:embed names.
	for _, path := range buildInputs(t) {
		if ignored(path) {
			t.Errorf("%s: the build needs it; .dockerignore excludes it", path)
		}
	}
}

func goModVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod: no go directive")
	}
	return string(m[1])
}

// dockerignore returns whether .dockerignore excludes a path (relative,
// slash-separated): Docker's rules, last match wins, a directory's match
// covers its contents, * stays within a path element and ** spans them.
func dockerignore(t *testing.T) func(string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		re     *regexp.Regexp
		negate bool
	}
	var rules []rule
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		negate := strings.HasPrefix(line, "!")
		line = strings.Trim(strings.TrimPrefix(line, "!"), "/")
		var re strings.Builder
		for i := 0; i < len(line); i++ {
			switch {
			case strings.HasPrefix(line[i:], "**/"):
				re.WriteString(`(.*/)?`)
				i += 2
			case strings.HasPrefix(line[i:], "**"):
				re.WriteString(`.*`)
				i++
			case line[i] == '*':
				re.WriteString(`[^/]*`)
			case line[i] == '?':
				re.WriteString(`[^/]`)
			default:
				re.WriteString(regexp.QuoteMeta(line[i : i+1]))
			}
		}
		rules = append(rules, rule{regexp.MustCompile(`^` + re.String() + `(/.*)?$`), negate})
	}
	return func(path string) bool {
		excluded := false
		for _, r := range rules {
			if r.re.MatchString(path) {
				excluded = !r.negate
			}
		}
		return excluded
	}
}

var embedRE = regexp.MustCompile(`(?m)^//go:embed (.+)$`)

// buildInputs lists go.mod, go.sum, every non-test Go file and every file
// a go:embed line of one names, relative to the repository's root.
func buildInputs(t *testing.T) []string {
	t.Helper()
	out := []string{"go.mod", "go.sum"}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if rel == ".git" || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		out = append(out, filepath.ToSlash(rel))
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range embedRE.FindAllStringSubmatch(string(src), -1) {
			for _, pat := range strings.Fields(m[1]) {
				matches, err := filepath.Glob(filepath.Join(filepath.Dir(path), pat))
				if err != nil || len(matches) == 0 {
					t.Errorf("%s: go:embed %s matches nothing", rel, pat)
				}
				for _, mt := range matches {
					// A directory embeds its files: .dockerignore may
					// exclude some within it.
					err := filepath.WalkDir(mt, func(p string, d fs.DirEntry, err error) error {
						if err == nil && !d.IsDir() {
							r, _ := filepath.Rel(repoRoot, p)
							out = append(out, filepath.ToSlash(r))
						}
						return err
					})
					if err != nil {
						t.Error(err)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
