package store_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/viewcount/viewcount/sql/analyst"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/sql/store/storetest"
)

// corpus is every query the checks must accept: the analyst package's
// corpus and the worked examples in sql/examples.
func corpus(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../analyst/testdata/corpus.sql")
	if err != nil {
		t.Fatal(err)
	}
	qs := strings.Split(string(b), "-- ====\n")[1:]
	files, err := filepath.Glob("../examples/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, string(b))
	}
	return qs
}

// The engine reads every printed query as the checks did: one statement
// of the kind checked, every function and table on the lists. A function
// the engine's parser produces for syntax (tupleElement, lambda, …) that
// the list lacks, or a kind the checks misname, fails here.
func TestEngineAgrees(t *testing.T) {
	st := storetest.Open(t)
	r, err := store.OpenReadOnly(st, store.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	params := store.Params{"site": "a.com", "n": "3", "from": "2026-01-01", "to": "2026-01-31", "tz": "UTC", "page": "/", "names": store.ArrayParam([]string{"readonly"})}
	for _, text := range corpus(t) {
		// The corpus names the store's database viewcount.
		text = strings.ReplaceAll(text, "viewcount", r.Database())
		q, err := analyst.Check(text, r.Policy())
		if err != nil {
			t.Errorf("%.80q: refused: %v", text, err)
			continue
		}
		ast, err := r.ExplainAST(t.Context(), q, params)
		if err != nil {
			t.Errorf("%.80q: EXPLAIN AST of %q: %v", text, q.Text(), err)
			continue
		}
		if err := q.VerifyEngineAST(ast); err != nil {
			t.Errorf("%.80q: the engine disagrees: %v\n%s", text, err, ast)
		}
	}
}
