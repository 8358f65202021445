package judge

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbiddenDeps are the packages (and everything under them) the rules may
// not depend on, however indirectly: the stream, the store and its engines.
var forbiddenDeps = []string{
	"github.com/nats-io/",
	"github.com/viewcount/viewcount/sql/store",
	"github.com/ClickHouse/clickhouse-go",
	"github.com/ClickHouse/ch-go",
	"github.com/ebitengine/purego",
}

// forbiddenImports may not be imported by this package or by any package
// outside the standard library that it depends on (the standard library's
// crypto uses math/rand inside, which draws nothing the rules see).
var forbiddenImports = []string{"math/rand", "math/rand/v2"}

// wallClock are the functions of package time that read or wait on the
// wall clock. time.Unix, time.Date, durations and the methods of a
// time.Time are arithmetic on times the events carry, and stay allowed.
var wallClock = map[string]bool{
	"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "Tick": true,
	"NewTimer": true, "NewTicker": true, "AfterFunc": true,
}

// TestRulesStayPure keeps the package doc's promise with the toolchain
// rather than by discipline: the package depends on no NATS, no store and
// no ClickHouse engine (go list -deps, test files aside), neither it nor a
// non-standard package it depends on imports math/rand, and no non-test
// file of the package names a wall-clock function of package time.
func TestRulesStayPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}} {{.Standard}} {{join .Imports " "}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg, std := f[0], f[1] == "true"
		for _, bad := range forbiddenDeps {
			if strings.HasPrefix(pkg, bad) {
				t.Errorf("the rules depend on %s: keep the stream and the store in package validate", pkg)
			}
		}
		if std {
			continue
		}
		for _, imp := range f[2:] {
			for _, bad := range forbiddenImports {
				if imp == bad {
					t.Errorf("%s imports %s: the rules draw no randomness (a replay must give the same verdicts)", pkg, imp)
				}
			}
		}
	}

	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	scanned := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		scanned++
		for _, bad := range wallClockUses(file) {
			t.Errorf("%s: %s reads the wall clock: the rules are clocked by the events' own times", fset.Position(bad.Pos()), bad.Sel.Name)
		}
	}
	if scanned == 0 {
		t.Fatal("no Go files scanned")
	}
}

// wallClockUses returns the selector expressions naming a wall-clock
// function of package time in file, by whatever name file imports it
// (a dot import counts as a use: it would hide them).
func wallClockUses(file *ast.File) []*ast.SelectorExpr {
	var uses []*ast.SelectorExpr
	names := map[string]bool{}
	for _, imp := range file.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path != "time" {
			continue
		}
		name := "time"
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			uses = append(uses, &ast.SelectorExpr{X: imp.Name, Sel: &ast.Ident{NamePos: imp.Pos(), Name: `import . "time"`}})
		}
		names[name] = true
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] && wallClock[sel.Sel.Name] {
				uses = append(uses, sel)
			}
		}
		return true
	})
	return uses
}
