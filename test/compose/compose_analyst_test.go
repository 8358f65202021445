//go:build !race

package compose

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/store/storetest"
)

var (
	sqlBlockRE   = regexp.MustCompile("(?s)```sql\n(.*?)```")
	profileSetRE = regexp.MustCompile(`(\w+) = ('[^']*'|\d+)`)
)

// TestAnalystUserSQL: the SQL docs/analysts.md gives for a server's
// analyst user parses in the engine and says what analyst.xml (the
// compose file's user) says: the same profile settings and the one grant.
func TestAnalystUserSQL(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "analysts.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The page has other SQL (worked questions): the block that makes the
	// user is the one with its profile.
	var m [][]byte
	for _, b := range sqlBlockRE.FindAllSubmatch(doc, -1) {
		if bytes.Contains(b[1], []byte("CREATE SETTINGS PROFILE analyst")) {
			m = b
		}
	}
	if m == nil {
		t.Fatal("docs/analysts.md: no sql block making the analyst user")
	}
	st := storetest.Open(t)
	var profile, grant string
	for _, stmt := range strings.Split(string(m[1]), ";\n") {
		var lines []string
		for _, l := range strings.Split(stmt, "\n") {
			if i := strings.Index(l, "--"); i >= 0 {
				l = l[:i]
			}
			lines = append(lines, l)
		}
		stmt = strings.TrimSuffix(strings.TrimSpace(strings.Join(lines, "\n")), ";")
		if stmt == "" {
			continue
		}
		if _, err := st.Query(t.Context(), "EXPLAIN AST "+strings.ReplaceAll(stmt, "'…'", "'x'"), nil); err != nil {
			t.Errorf("docs/analysts.md: %.60s…: %v", stmt, err)
		}
		switch {
		case strings.HasPrefix(stmt, "CREATE SETTINGS PROFILE analyst"):
			profile = stmt
		case strings.HasPrefix(stmt, "GRANT "):
			grant = stmt
		}
	}
	users := readXML(t, filepath.Join(repoRoot, "deploy", "clickhouse", "users.d", "analyst.xml"))
	xmlProfile := users.child("profiles", "analyst")
	inSQL := map[string]string{}
	for _, kv := range profileSetRE.FindAllStringSubmatch(profile, -1) {
		inSQL[kv[1]] = strings.Trim(kv[2], "'")
	}
	for _, n := range xmlProfile.Nodes {
		name := n.XMLName.Local
		if name == "constraints" {
			continue
		}
		if got := inSQL[name]; got != strings.TrimSpace(n.Text) {
			t.Errorf("profile setting %s: analyst.xml %q, docs/analysts.md %q", name, strings.TrimSpace(n.Text), got)
		}
		delete(inSQL, name)
	}
	for name := range inSQL {
		t.Errorf("profile setting %s: in docs/analysts.md, not in analyst.xml", name)
	}
	if want := "GRANT SELECT ON viewcount.* TO analyst"; grant != want {
		t.Errorf("docs/analysts.md grant %q, want %q (analyst.xml's only grant)", grant, want)
	}
}
