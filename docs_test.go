package viewcount

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsLinks keeps the docs tree navigable: every relative link in the
// Markdown files resolves to a file and, with a #fragment, to a heading of
// it (GitHub's anchors), and the README links every page under docs/.
func TestDocsLinks(t *testing.T) {
	var files []string
	for _, pattern := range []string{"*.md", "docs/*.md", "docs/*/*.md", "docs/*/*/*.md", "sql/*.md", "sql/*/*.md", "deploy/*.md", "test/*.md"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found %d Markdown files: run from the repository root", len(files))
	}
	headings := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := headings[path]; ok {
			return a
		}
		a := map[string]bool{}
		b, _ := os.ReadFile(path)
		fence, seen := false, map[string]int{}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "```") {
				fence = !fence
			}
			if fence || !headingRE.MatchString(l) {
				continue
			}
			s := slug(strings.TrimLeft(l, "#"))
			if n := seen[s]; n > 0 {
				a[s+"-"+strconv.Itoa(n)] = true
			} else {
				a[s] = true
			}
			seen[s]++
		}
		headings[path] = a
		return a
	}
	linked := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range linkRE.FindAllStringSubmatch(stripCode(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Clean(filepath.Join(filepath.Dir(f), path))
			}
			st, err := os.Stat(dest)
			if err != nil {
				t.Errorf("%s: link %q: no %s", f, target, dest)
				continue
			}
			if f == "README.md" {
				linked[dest] = true
			}
			if frag != "" && !st.IsDir() && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[frag] {
				t.Errorf("%s: link %q: %s has no heading with that anchor", f, target, dest)
			}
		}
	}
	pages, _ := filepath.Glob("docs/*.md")
	pages = append(pages, "docs/benchmarks/README.md")
	for _, p := range pages {
		if !linked[p] {
			t.Errorf("README.md does not link %s", p)
		}
	}
}

var (
	headingRE = regexp.MustCompile(`^#{1,6} `)
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	codeRE    = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N}\- _]`)
)

// stripCode drops code blocks and spans, where brackets are not links.
func stripCode(s string) string { return codeRE.ReplaceAllString(s, "") }

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces as hyphens.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(strings.ReplaceAll(h, "`", "")))
	return strings.ReplaceAll(slugDrop.ReplaceAllString(h, ""), " ", "-")
}
