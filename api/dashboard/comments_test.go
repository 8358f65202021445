package dashboard

import (
	"strings"
	"testing"
)

// TestScriptsKeepCommentLinesOut: each of our scripts is served as written
// less the lines that hold only a // comment, line for line otherwise; and
// nothing it says could make that drop change the code: no template
// literal or block comment spans lines (a "//" line inside one would be
// text, not a comment).
func TestScriptsKeepCommentLinesOut(t *testing.T) {
	srv := newServer(t)
	_, page := get(t, srv.URL+"/dashboard/example.com")
	seen := 0
	for _, m := range refRE.FindAllStringSubmatch(page, -1) {
		name, _, _ := strings.Cut(strings.TrimPrefix(m[1], StaticPrefix), "?")
		if !strings.HasSuffix(name, ".js") || strings.HasPrefix(name, "vendor/") {
			continue
		}
		seen++
		src, err := assets.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		dropped := 0
		for i, line := range strings.SplitAfter(string(src), "\n") {
			if strings.Count(line, "`")%2 != 0 || strings.Count(line, "/*") != strings.Count(line, "*/") {
				t.Errorf("%s:%d: a template literal or block comment that may span lines: %q", name, i+1, line)
			}
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), "//") {
				dropped++
				continue
			}
			want.WriteString(line)
		}
		_, got := get(t, srv.URL+m[1], "Accept-Encoding", "identity")
		if got != want.String() {
			t.Errorf("%s: served body is not the source less its %d comment lines", name, dropped)
		}
		if dropped == 0 {
			t.Errorf("%s: no comment line dropped; the test checks nothing", name)
		}
	}
	if seen == 0 {
		t.Fatal("the page names none of our scripts")
	}
}
