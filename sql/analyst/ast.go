package analyst

// The tree the parser builds: only what an analyst's statement may hold.
// Each node keeps what the printer needs to write it back in the
// analyst's token order (parentheses are nodes, aliases say whether AS
// was written), so the engine applies its own precedence to the text.

// name is an identifier: a word, or a quoted name decoded.
type name struct {
	s      string
	quoted bool
}

type expr interface{ isExpr() }

type (
	identExpr struct{ parts []name } // a, t.a, db.t.a
	// starExpr is *, or t.* when qual is set, with EXCEPT/REPLACE.
	starExpr struct {
		qual []name
		mods []columnMod
	}
	// columnsExpr is the matcher COLUMNS('regexp') or COLUMNS(a, b).
	columnsExpr struct {
		args []expr
		mods []columnMod
	}
	numberLit  struct{ text string }
	stringLit  struct{ value string } // decoded
	keywordLit struct{ kw string }    // NULL, TRUE, FALSE
	paramExpr  struct {
		name string
		typ  *typeExpr
	}
	typedLit struct { // DATE '…', TIMESTAMP '…'
		kw  string
		lit *stringLit
	}
	unaryExpr struct {
		op string // "-" or "NOT"
		x  expr
	}
	binaryExpr struct {
		op   string // upper case: "+", "AND", "NOT LIKE", "GLOBAL NOT IN", "IS DISTINCT FROM", …
		l, r expr
	}
	isNullExpr struct {
		x   expr
		not bool
	}
	betweenExpr struct {
		x, lo, hi expr
		not       bool
	}
	ternaryExpr struct{ c, a, b expr }
	lambdaExpr  struct {
		params []name
		paren  bool
		body   expr
	}
	castExpr struct {
		x    expr
		typ  *typeExpr  // CAST(x AS T), x::T
		str  *stringLit // CAST(x, 'T')
		form string     // "AS", ",", "::"
	}
	caseExpr struct {
		subject     expr
		whens, then []expr
		els         expr
	}
	intervalExpr struct {
		x    expr
		unit string
	}
	// callExpr is a function call: name(params)(args) for a parametric
	// aggregate, name(args) otherwise, with what may follow.
	callExpr struct {
		fn        name
		params    []expr // the first parentheses of a parametric aggregate
		hasParams bool
		distinct  bool
		args      []expr
		seps      []string // between args when not ", ": SUBSTRING(x FROM 1 FOR 2)
		lead      string   // TRIM(BOTH … FROM …), EXTRACT(DAY FROM …): the word first
		nulls     string   // RESPECT NULLS, IGNORE NULLS
		filter    expr     // FILTER (WHERE …)
		over      *windowSpec
		overName  *name
	}
	subscriptExpr   struct{ x, i expr }
	tupleAccessExpr struct {
		x   expr
		idx string // a number, or a name
	}
	parenExpr struct { // (a), (a, b), (a,)
		items    []expr
		trailing bool
	}
	arrayExpr    struct{ items []expr }
	subqueryExpr struct {
		q    *selectUnion
		bare bool // a function's only argument, its parentheses the call's
	}
	aliasExpr struct {
		x     expr
		alias name
		as    bool
	}
)

func (*identExpr) isExpr()       {}
func (*starExpr) isExpr()        {}
func (*columnsExpr) isExpr()     {}
func (*numberLit) isExpr()       {}
func (*stringLit) isExpr()       {}
func (*keywordLit) isExpr()      {}
func (*paramExpr) isExpr()       {}
func (*typedLit) isExpr()        {}
func (*unaryExpr) isExpr()       {}
func (*binaryExpr) isExpr()      {}
func (*isNullExpr) isExpr()      {}
func (*betweenExpr) isExpr()     {}
func (*ternaryExpr) isExpr()     {}
func (*lambdaExpr) isExpr()      {}
func (*castExpr) isExpr()        {}
func (*caseExpr) isExpr()        {}
func (*intervalExpr) isExpr()    {}
func (*callExpr) isExpr()        {}
func (*subscriptExpr) isExpr()   {}
func (*tupleAccessExpr) isExpr() {}
func (*parenExpr) isExpr()       {}
func (*arrayExpr) isExpr()       {}
func (*subqueryExpr) isExpr()    {}
func (*aliasExpr) isExpr()       {}

// columnMod is * EXCEPT (…) or * REPLACE (expr AS name, …).
type columnMod struct {
	kw    string
	items []expr
}

// typeExpr is a data type: a name with, in parentheses, types, literals,
// named elements (Tuple(a UInt8)) or enum values ('a' = 1).
type typeExpr struct {
	name    string
	args    []typeArg
	hasArgs bool
}

type typeArg struct {
	typ     *typeExpr
	lit     expr  // a number or a string
	field   *name // Tuple(a UInt8): a, then typ
	enumVal expr  // 'a' = 1: lit 'a', enumVal 1
}

// selectUnion is SELECTs joined by set operations, in the analyst's order.
type selectUnion struct {
	parts []*selectPart
}

type selectPart struct {
	op    string // "" for the first, else "UNION ALL", "EXCEPT", "INTERSECT DISTINCT", …
	sel   *selectStmt
	paren *selectUnion
}

type selectStmt struct {
	with        []withItem
	distinct    bool
	distinctOn  []expr
	all         bool
	top         expr
	topTies     bool
	items       []expr
	from        *fromClause
	prewhere    expr
	where       expr
	groupBy     *groupBy
	having      expr
	window      []windowDef
	qualify     expr
	orderBy     []orderItem
	interpolate *interpolate
	limitBy     *limitClause
	limit       *limitClause
	offset      *limitClause // OFFSET n [ROWS] [FETCH …] without LIMIT
	settings    []setting
}

// withItem is WITH name AS (subquery) or WITH expr AS name.
type withItem struct {
	name name
	q    *selectUnion
	x    expr
}

type fromClause struct {
	first *tableRef
	joins []join
}

type join struct {
	comma      bool
	kw         []string // LEFT, ANY, …, JOIN; ARRAY JOIN
	arrays     []expr   // ARRAY JOIN's arrays
	table      *tableRef
	on         expr
	using      []expr
	usingParen bool
}

type tableRef struct {
	table  []name // t or db.t
	fn     *callExpr
	sub    *selectUnion
	alias  *name
	as     bool
	final  bool
	sample expr
	offset expr
}

type groupBy struct {
	kind  string // "", "ALL", "ROLLUP", "CUBE", "GROUPING SETS"
	items []expr
	mods  []string // WITH ROLLUP, WITH CUBE, WITH TOTALS
}

type orderItem struct {
	x       expr
	dir     string
	nulls   string
	collate *stringLit
	fill    *fill
}

type fill struct{ from, to, step, staleness expr }

type interpolate struct {
	cols  []name
	exprs []expr // nil where no AS
	paren bool
}

type limitClause struct {
	n, offset expr
	comma     bool // LIMIT offset, n
	ties      bool
	rows      string // OFFSET n ROWS
	fetch     string // FETCH FIRST n ROWS ONLY
	fetchN    expr
	by        []expr
}

type setting struct {
	name  string
	value expr
}

type windowDef struct {
	name name
	spec *windowSpec
}

type windowSpec struct {
	base      *name
	partition []expr
	order     []orderItem
	frame     *frame
}

type frame struct {
	kind     string
	between  bool
	from, to frameBound
}

type frameBound struct {
	kw  string // UNBOUNDED, CURRENT ROW, or "" with x
	x   expr
	dir string // PRECEDING, FOLLOWING
}

// statement is what Check parsed: one of the kinds an analyst may run.
type statement struct {
	explain  string // EXPLAIN AST, …: then sel is the query explained
	sel      *selectUnion
	show     *showStmt
	describe *tableRef
	exists   []name
	format   string
	settings []setting // after FORMAT
}

type showStmt struct {
	what    string // TABLES, DATABASES, CREATE TABLE
	from    []name
	table   []name
	not     bool
	like    string // LIKE, ILIKE
	pattern *stringLit
	limit   expr
}
