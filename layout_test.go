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

// roleImportDebt are the role-to-role imports not yet undone, each to go:
// the test fails on any other, and on one of these once it is gone, so the
// list only shrinks.
var roleImportDebt = []string{
	"api -> rollup",      // rollup.Pending, FedThrough, Rollups: to the shared vocabulary
	"validate -> rollup", // validate.Sink returns *rollup.Writer
}

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
	found := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		from := roleOf(f[0])
		if from == "" {
			continue
		}
		for _, imp := range f[1:] {
			if to := roleOf(imp); to != "" && to != from {
				edge := from + " -> " + to
				found[edge] = true
				if !slices.Contains(roleImportDebt, edge) {
					t.Errorf("%s imports %s: a role imports another role (move what both need to the root package or internal/)", f[0], imp)
				}
			}
		}
	}
	for _, edge := range roleImportDebt {
		if !found[edge] {
			t.Errorf("%s is gone: take it off roleImportDebt", edge)
		}
	}
}
