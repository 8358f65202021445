package viewcount

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// roles are the packages that each run one stage of the pipeline; a role
// never imports another (DESIGN.md: the arrows point from cmd to the roles
// to the shared vocabulary and the store).
var roles = []string{"ingest", "validate", "rollup", "api"}

// TestRolesImportNoRole lists every package's imports with `go list` (test
// files aside) and fails when a role imports another.
func TestRolesImportNoRole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/viewcount/viewcount/"
	roleOf := func(pkg string) string {
		rel, ok := strings.CutPrefix(pkg, mod)
		if !ok {
			return ""
		}
		top, _, _ := strings.Cut(rel, "/")
		if slices.Contains(roles, top) {
			return top
		}
		return ""
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from := roleOf(f[0])
		if from == "" {
			continue
		}
		for _, imp := range f[1:] {
			if to := roleOf(imp); to != "" && to != from {
				t.Errorf("%s imports %s: a role imports another role (move what both need to the root package or internal/, "+
					"or declare the interface the importer consumes and let cmd/viewcount wire the other role in)", f[0], imp)
			}
		}
	}
}

// TestRootImportsOnlyStandardLibrary keeps the package doc's promise: the
// shared vocabulary every role and the pure rules (validate/judge) import
// depends on nothing outside the standard library, however indirectly. The
// metrics library stays behind Latency, in internal/latency.
func TestRootImportsOnlyStandardLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{.Standard}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, std, _ := strings.Cut(line, " ")
		if std != "true" && pkg != "github.com/viewcount/viewcount" {
			t.Errorf("package viewcount depends on %s", pkg)
		}
	}
}
