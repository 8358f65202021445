package analyst

import (
	"strings"
	"testing"
)

// The engine's opinion is checked against the same lists: a tree with a
// second statement, another kind, a function or a table the checks would
// refuse is refused even when Check passed the text.
func TestVerifyEngineAST(t *testing.T) {
	q, err := Check("SELECT count() FROM views_raw WHERE x IN t", testPolicy)
	if err != nil {
		t.Fatal(err)
	}
	const good = `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 3)
   ExpressionList (children 1)
    Function count (alias c) (children 1)
     ExpressionList
   TablesInSelectQuery (children 1)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      TableIdentifier viewcount.views_raw
   Function in (children 1)
    ExpressionList (children 2)
     Identifier x
     Identifier t
`
	if err := q.VerifyEngineAST(good); err != nil {
		t.Fatalf("the engine's own tree: %v", err)
	}
	f := func(ast, want string) {
		t.Helper()
		err := q.VerifyEngineAST(ast)
		if err == nil || !strings.Contains(err.Error(), want) || !IsRefusal(err) {
			t.Errorf("got %v, want a refusal containing %q\n%s", err, want, ast)
		}
	}
	f(good+"SelectWithUnionQuery (children 1)\n ExpressionList\n", "more than one statement")
	f(good+"2\n", "more than one statement")
	f(strings.Replace(good, "SelectWithUnionQuery", "KillQueryQuery", 1), "not a SelectWithUnionQuery")
	f(strings.Replace(good, "Function count", "Function file", 1), `function "file"`)
	f(strings.Replace(good, "TableIdentifier viewcount.views_raw", "TableIdentifier other.views_raw", 1), `database "other"`)
	f(strings.Replace(good, "TableIdentifier viewcount.views_raw", "TableIdentifier system.users", 1), "system")
	f(strings.Replace(good, "TableIdentifier viewcount.views_raw", "TableIdentifier viewcount.a.b", 1), "table name")
	f(strings.Replace(good, "     TableExpression (children 1)\n      TableIdentifier viewcount.views_raw", "     TableExpression (children 1)\n      Function merge", 1), `table function "merge"`)
	f(strings.Replace(good, "     Identifier t\n", "     Identifier system.users\n", 1), "system")
	f(good[:strings.Index(good, "   TablesInSelectQuery")], "incomplete")
	f(strings.Replace(good, "SelectQuery (children 3)", "SelectQuery (children 4)", 1), "incomplete")
	f("", "empty line")
	f("  SelectWithUnionQuery\n", "more than one statement")
	f("SelectWithUnionQuery (children 1)\n   ExpressionList\n", "")
}
