package analyst

import (
	"os"
	"strings"
	"testing"
)

// Check never panics and never loops on any input; what it accepts it
// prints as a fixed point (checked again, the text prints the same and
// asks for the same format), one statement with no comment left in it.
func FuzzCheck(f *testing.F) {
	b, err := os.ReadFile("testdata/corpus.sql")
	if err != nil {
		f.Fatal(err)
	}
	for _, q := range strings.Split(string(b), "-- ====\n")[1:] {
		f.Add(q)
	}
	for _, q := range []string{
		"SELECT 1; SELECT 2", "SELECT file('x')", "SELECT 'x' INTO OUTFILE 'y'", "SELECT 1 /* /* */ */",
		"SELECT `a\\`b`", "SELECT $a$b$a$", "SELECT 1 # x\n", "SELECT 'a\\'", "EXPLAIN SELECT 1", "SHOW TABLES",
	} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, text string) {
		q, err := Check(text, testPolicy)
		if err != nil {
			if !IsRefusal(err) {
				t.Fatalf("%q: not a refusal: %v", text, err)
			}
			return
		}
		again, err := Check(q.Text(), testPolicy)
		if err != nil {
			t.Fatalf("%q printed as %q, which is refused: %v", text, q.Text(), err)
		}
		if again.Text() != q.Text() || again.Kind != q.Kind || again.Format != "" {
			t.Fatalf("%q printed as %q, which prints as %q (%s, %q)", text, q.Text(), again.Text(), again.Kind, again.Format)
		}
		if _, err := lex(q.Text()); err != nil {
			t.Fatalf("%q printed as %q, which does not lex: %v", text, q.Text(), err)
		}
		if c := outsideQuotes(q.Text()); strings.Contains(c, "--") || strings.Contains(c, "/*") || strings.Contains(c, "#") || strings.Contains(c, ";") || strings.Contains(c, "$") {
			t.Fatalf("%q printed as %q holds a comment, ';' or '$' outside quotes", text, q.Text())
		}
	})
}

// outsideQuotes is text with every string and quoted name taken out.
func outsideQuotes(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if c := text[i]; c == '\'' || c == '`' || c == '"' {
			end, err := quotedEnd(text, i, c)
			if err != nil {
				return text
			}
			i = end - 1
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(text[i])
	}
	return b.String()
}
