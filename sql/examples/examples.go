// Package examples holds the analyst example queries (NAME.sql, each with
// a comment header saying what it answers), embedded in the binary and
// served by `viewcount sql --examples` and the SQL endpoint's docs.
package examples

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Text returns the analyst example NAME.sql, comment header
// included, and whether it exists.
func Text(name string) (string, bool) {
	text, err := fs.ReadFile(files, name+".sql")
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(text)), true
}

// Names lists the names Text accepts.
func Names() []string {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		panic(fmt.Sprintf("examples: embedded files missing: %v", err))
	}
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".sql"); ok {
			out = append(out, name)
		}
	}
	return out
}
