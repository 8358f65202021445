package analyst

import (
	"strconv"
	"strings"
)

// inFunctions are the engine's names for IN and its kin: the right side
// of one may be a bare name the engine reads as a table (x IN t).
var inFunctions = map[string]bool{
	"in": true, "notIn": true, "globalIn": true, "globalNotIn": true,
	"nullIn": true, "notNullIn": true, "globalNullIn": true, "globalNotNullIn": true,
	"inIgnoreSet": true, "notInIgnoreSet": true, "globalInIgnoreSet": true, "globalNotInIgnoreSet": true,
	"nullInIgnoreSet": true, "notNullInIgnoreSet": true, "globalNullInIgnoreSet": true, "globalNotNullInIgnoreSet": true,
}

// astNode is one line of the engine's EXPLAIN AST: its depth, node type
// and the name after it (a function's, a table's), without alias and
// child count.
type astNode struct {
	depth    int
	typ      string
	name     string
	children int // as the line declares it, "(children N)"; 0 without
}

// VerifyEngineAST is the engine's second opinion on q: explain is the
// output of EXPLAIN AST for q.Text(). The engine's tree must hold one
// statement of q's kind, and every function, table function and table it
// names must pass the checks Check applied: a difference between the
// engine's parser and the checker's is refused, never run.
func (q Query) VerifyEngineAST(explain string) error {
	disagree := func(what string) error {
		return denied("the engine reads this query differently from the checks (%s); it is not run", what)
	}
	lines := strings.Split(strings.TrimRight(explain, "\n"), "\n")
	nodes := make([]astNode, 0, len(lines))
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		depth := len(line) - len(trimmed)
		if trimmed == "" {
			return disagree("an empty line")
		}
		if i == 0 && depth != 0 || i > 0 && depth == 0 {
			return disagree("more than one statement")
		}
		typ, rest, _ := strings.Cut(trimmed, " ")
		nodes = append(nodes, astNode{depth: depth, typ: typ, name: nodeArg(rest), children: childCount(rest)})
	}
	if len(nodes) == 0 {
		return disagree("no statement")
	}
	if Kind(nodes[0].typ) != q.Kind {
		return disagree("a " + nodes[0].typ + ", not a " + string(q.Kind))
	}
	switch q.Kind {
	case KindShowCreate, KindExists:
		// SHOW CREATE TABLE db.t and EXISTS TABLE db.t: the table as two
		// identifiers under the root.
		var ids []string
		for _, n := range nodes[1:] {
			if n.depth == 1 && n.typ == "Identifier" {
				ids = append(ids, n.name)
			}
		}
		if len(ids) == 2 {
			if err := checkTable(q.db, ids[0], ids[1]); err != nil {
				return err
			}
		} else if len(ids) > 2 {
			return disagree("a table name of more than two parts")
		}
	}
	// Every node has the children it declares: a tree cut short (a
	// statement the engine stopped mid-answer) is no opinion.
	for i, n := range nodes {
		got := 0
		for j := i + 1; j < len(nodes) && nodes[j].depth > n.depth; j++ {
			if nodes[j].depth == n.depth+1 {
				got++
			}
		}
		if got != n.children {
			return disagree("an incomplete tree")
		}
	}
	// parents[d] is the node at depth d on the path to the current one.
	var parents []astNode
	for i, n := range nodes {
		if n.depth > len(parents) {
			return disagree("a malformed tree")
		}
		parents = append(parents[:n.depth], n)
		switch n.typ {
		case "Function":
			if n.depth > 0 && parents[n.depth-1].typ == "TableExpression" {
				if !tableFunctions[n.name] {
					return denied("table function %s() is not allowed", quoteForMessage(n.name))
				}
				continue
			}
			if ok, _ := lookupFunction(n.name); !ok {
				return denied("function %s is not allowed", quoteForMessage(n.name))
			}
			if inFunctions[n.name] {
				if err := q.checkInRight(nodes, i); err != nil {
					return err
				}
			}
		case "TableIdentifier":
			if err := q.checkEngineTable(n.name); err != nil {
				return err
			}
		}
	}
	return nil
}

// nodeArg is the name on an EXPLAIN AST line after the node type, without
// " (alias …)" and " (children N)".
func nodeArg(rest string) string {
	if i := strings.LastIndex(rest, " (children "); i >= 0 && strings.HasSuffix(rest, ")") {
		rest = rest[:i]
	} else if strings.HasPrefix(rest, "(children ") {
		rest = ""
	}
	if i := strings.Index(rest, " (alias "); i >= 0 {
		rest = rest[:i]
	} else if strings.HasPrefix(rest, "(alias ") {
		rest = ""
	}
	return rest
}

// childCount is N of a line's " (children N)", or 0.
func childCount(rest string) int {
	i := strings.LastIndex(rest, "(children ")
	if i < 0 || !strings.HasSuffix(rest, ")") {
		return 0
	}
	n, err := strconv.Atoi(rest[i+len("(children ") : len(rest)-1])
	if err != nil {
		return -1
	}
	return n
}

// checkInRight checks the right side of the IN-function at nodes[i]: an
// identifier there may name a table.
func (q Query) checkInRight(nodes []astNode, i int) error {
	fn := nodes[i]
	// Function in → ExpressionList → (left, right): the second node one
	// level below the ExpressionList.
	args := 0
	for j := i + 1; j < len(nodes) && nodes[j].depth > fn.depth; j++ {
		if nodes[j].depth != fn.depth+2 {
			continue
		}
		args++
		if args == 2 && nodes[j].typ == "Identifier" {
			return q.checkEngineTable(nodes[j].name)
		}
	}
	return nil
}

// checkEngineTable checks a table name as EXPLAIN AST prints it: bare (the
// store's database, or a WITH table) or database.table.
func (q Query) checkEngineTable(name string) error {
	db, table, qualified := strings.Cut(name, ".")
	if !qualified {
		return nil
	}
	if strings.Contains(table, ".") {
		return denied("table name %s is not allowed", quoteForMessage(name))
	}
	return checkTable(q.db, db, table)
}
