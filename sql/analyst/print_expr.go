package analyst

import (
	"sort"
	"strconv"
	"strings"
)

// intervalUnits are the units INTERVAL and EXTRACT take (also plural).
var intervalUnits = map[string]bool{
	"NANOSECOND": true, "MICROSECOND": true, "MILLISECOND": true, "SECOND": true, "MINUTE": true,
	"HOUR": true, "DAY": true, "WEEK": true, "MONTH": true, "QUARTER": true, "YEAR": true,
}

// functionNameArgs are the functions whose first argument names an
// aggregate function in a string; it must name an allowed one.
var functionNameArgs = map[string]bool{"arrayReduce": true, "arrayReduceInRanges": true, "initializeAggregation": true}

// maxExprDepth bounds how deeply expressions nest, chains of operators
// included (a + a + … is as deep as it is long): the engine's own
// max_ast_depth is 1000.
const maxExprDepth = 1000

// inOps are the operators whose right side may be a bare table name.
var inOps = map[string]bool{"IN": true, "NOT IN": true, "GLOBAL IN": true, "GLOBAL NOT IN": true}

func (p *printer) list(xs []expr) error {
	for i, x := range xs {
		if i > 0 {
			p.w(", ")
		}
		if err := p.expr(x); err != nil {
			return err
		}
	}
	return nil
}

// seq prints expressions with the text between them: seq(a, " AND ", b).
func (p *printer) seq(parts ...any) error {
	for _, part := range parts {
		switch v := part.(type) {
		case string:
			p.w(v)
		case expr:
			if err := p.expr(v); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *printer) expr(e expr) error {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxExprDepth {
		return refuse(codeTooDeep, "TOO_DEEP_AST", "an expression nests more than %d levels", maxExprDepth)
	}
	switch x := e.(type) {
	case *identExpr:
		for i, n := range x.parts {
			if i > 0 {
				p.w(".")
			}
			p.ident(n)
		}
	case *starExpr:
		for _, n := range x.qual {
			p.ident(n)
			p.w(".")
		}
		p.w("*")
		return p.columnMods(x.mods)
	case *columnsExpr:
		p.w("COLUMNS(")
		if err := p.list(x.args); err != nil {
			return err
		}
		p.w(")")
		return p.columnMods(x.mods)
	case *numberLit:
		p.w(x.text)
	case *stringLit:
		p.stringLit(x)
	case *keywordLit:
		p.w(x.kw)
	case *paramExpr:
		p.w("{", x.name, ":")
		if err := p.typ(x.typ); err != nil {
			return err
		}
		p.w("}")
	case *typedLit:
		p.w(x.kw, " ")
		p.stringLit(x.lit)
	case *unaryExpr:
		p.w(x.op)
		if x.op == "NOT" {
			p.w(" ")
		} else if u, ok := x.x.(*unaryExpr); ok && u.op == "-" {
			p.w(" ") // "- -1", never the comment "--1"
		}
		return p.expr(x.x)
	case *binaryExpr:
		if err := p.expr(x.l); err != nil {
			return err
		}
		p.w(" ", x.op, " ")
		if inOps[x.op] {
			return p.inRight(x.r)
		}
		return p.expr(x.r)
	case *isNullExpr:
		if err := p.expr(x.x); err != nil {
			return err
		}
		if x.not {
			p.w(" IS NOT NULL")
		} else {
			p.w(" IS NULL")
		}
	case *betweenExpr:
		if err := p.expr(x.x); err != nil {
			return err
		}
		if x.not {
			p.w(" NOT")
		}
		return p.seq(" BETWEEN ", x.lo, " AND ", x.hi)
	case *ternaryExpr:
		return p.seq(x.c, " ? ", x.a, " : ", x.b)
	case *lambdaExpr:
		if x.paren {
			p.w("(")
		}
		for i, n := range x.params {
			if i > 0 {
				p.w(", ")
			}
			p.ident(n)
		}
		if x.paren {
			p.w(")")
		}
		p.w(" -> ")
		return p.expr(x.body)
	case *castExpr:
		if x.form == "::" {
			if err := p.expr(x.x); err != nil {
				return err
			}
			p.w("::")
			return p.typ(x.typ)
		}
		p.w("CAST(")
		if err := p.expr(x.x); err != nil {
			return err
		}
		if x.form == "AS" {
			p.w(" AS ")
			if err := p.typ(x.typ); err != nil {
				return err
			}
		} else {
			p.w(", ")
			p.stringLit(x.str)
		}
		p.w(")")
	case *caseExpr:
		p.w("CASE")
		if x.subject != nil {
			p.w(" ")
			if err := p.expr(x.subject); err != nil {
				return err
			}
		}
		for i := range x.whens {
			if err := p.seq(" WHEN ", x.whens[i], " THEN ", x.then[i]); err != nil {
				return err
			}
		}
		if err := p.clause(" ELSE ", x.els); err != nil {
			return err
		}
		p.w(" END")
	case *intervalExpr:
		p.w("INTERVAL ")
		if err := p.expr(x.x); err != nil {
			return err
		}
		if x.unit != "" {
			p.w(" ", x.unit)
		}
	case *callExpr:
		return p.call(x)
	case *subscriptExpr:
		if err := p.expr(x.x); err != nil {
			return err
		}
		p.w("[")
		if err := p.expr(x.i); err != nil {
			return err
		}
		p.w("]")
	case *tupleAccessExpr:
		if err := p.expr(x.x); err != nil {
			return err
		}
		// Spaces around the dot: after a number ("0 . 1") or before one
		// ("x . 1", whatever came before) it would otherwise join a number.
		p.w(" . ", x.idx)
	case *parenExpr:
		p.w("(")
		if err := p.list(x.items); err != nil {
			return err
		}
		if x.trailing {
			p.w(",")
		}
		p.w(")")
	case *arrayExpr:
		p.w("[")
		if err := p.list(x.items); err != nil {
			return err
		}
		p.w("]")
	case *subqueryExpr:
		if x.bare {
			return p.selectUnion(x.q)
		}
		p.w("(")
		if err := p.selectUnion(x.q); err != nil {
			return err
		}
		p.w(")")
	case *aliasExpr:
		if err := p.expr(x.x); err != nil {
			return err
		}
		p.w(" AS ")
		p.ident(x.alias)
	default:
		return unsupported("this expression")
	}
	return nil
}

func (p *printer) columnMods(mods []columnMod) error {
	for _, m := range mods {
		p.w(" ", m.kw, " (")
		if err := p.list(m.items); err != nil {
			return err
		}
		p.w(")")
	}
	return nil
}

// inRight prints IN's right side: a bare name there may be a table (x IN
// t reads table t), so a qualified one must name a table analysts read;
// an unqualified one is a WITH name, a column or a table of the store's
// database (the session's database is always the store's).
func (p *printer) inRight(e expr) error {
	if id, ok := e.(*identExpr); ok && len(id.parts) > 1 {
		if len(id.parts) != 2 {
			return denied("IN %s: a table is db.table", quoteForMessage(id.parts[0].s))
		}
		if err := checkTable(p.q.db, id.parts[0].s, id.parts[1].s); err != nil {
			return err
		}
	}
	return p.expr(e)
}

func (p *printer) call(c *callExpr) error {
	n := c.fn.s
	if c.fn.quoted || !plainIdent(n) {
		return denied("function %s is not allowed", quoteForMessage(n))
	}
	allowed, _ := lookupFunction(n)
	if strings.EqualFold(n, "EXTRACT") && c.lead != "" {
		allowed = true // EXTRACT(DAY FROM d): the engine's toDayOfMonth and kin
	}
	if !allowed {
		return denied("function %s is not allowed: analysts may call the engine's pure functions (no file, URL, dictionary, introspection or server functions)", quoteForMessage(n))
	}
	if functionNameArgs[n] {
		if err := aggregateNameArg(c); err != nil {
			return err
		}
	}
	p.w(n, "(")
	if c.hasParams {
		if err := p.list(c.params); err != nil {
			return err
		}
		p.w(")(")
	}
	if c.distinct {
		p.w("DISTINCT ")
	}
	if c.lead != "" {
		p.w(c.lead, " ")
	}
	for i, a := range c.args {
		if i > 0 {
			if c.seps != nil {
				p.w(c.seps[i-1])
			} else {
				p.w(", ")
			}
		}
		if err := p.expr(a); err != nil {
			return err
		}
	}
	p.w(")")
	if c.nulls != "" {
		p.w(" ", c.nulls)
	}
	if err := p.clause(" FILTER (WHERE ", c.filter); err != nil {
		return err
	} else if c.filter != nil {
		p.w(")")
	}
	switch {
	case c.over != nil:
		p.w(" OVER ")
		return p.windowSpec(c.over)
	case c.overName != nil:
		p.w(" OVER ")
		p.ident(*c.overName)
	}
	return nil
}

// aggregateNameArg refuses arrayReduce('name', …) and the like unless the
// string names an allowed aggregate.
func aggregateNameArg(c *callExpr) error {
	var s *stringLit
	if len(c.args) > 0 {
		s, _ = c.args[0].(*stringLit)
	}
	if s == nil {
		return denied("%s takes the aggregate's name as a string here", c.fn.s)
	}
	n, _, _ := strings.Cut(s.value, "(") // 'quantile(0.5)'
	n = strings.TrimSpace(n)
	if _, agg := lookupFunction(n); !agg || !plainIdent(n) {
		return denied("aggregate function %s is not allowed", quoteForMessage(s.value))
	}
	return nil
}

// typ prints a data type. Type names are plain names; no function runs.
func (p *printer) typ(t *typeExpr) error {
	if t == nil || !plainIdent(t.name) {
		return unsupported("this type name")
	}
	p.w(t.name)
	if !t.hasArgs {
		return nil
	}
	p.w("(")
	for i, a := range t.args {
		if i > 0 {
			p.w(", ")
		}
		switch {
		case a.field != nil:
			p.ident(*a.field)
			p.w(" ")
			if err := p.typ(a.typ); err != nil {
				return err
			}
		case a.typ != nil:
			if err := p.typ(a.typ); err != nil {
				return err
			}
		default:
			if err := p.literal(a.lit); err != nil {
				return err
			}
			if a.enumVal != nil {
				p.w(" = ")
				if err := p.literal(a.enumVal); err != nil {
					return err
				}
			}
		}
	}
	p.w(")")
	return nil
}

// literal prints a type's argument: a string, a number or a negated one.
func (p *printer) literal(e expr) error {
	switch x := e.(type) {
	case *stringLit, *numberLit:
		return p.expr(x)
	case *unaryExpr:
		if _, ok := x.x.(*numberLit); ok && x.op == "-" {
			return p.expr(x)
		}
	}
	return unsupported("this argument of a type")
}

// ident prints a name: a plain one the analyst wrote bare stays bare (so
// ALL, inf and the like keep their meaning); any other is written in
// backquotes, backslashes and backquotes escaped, which ClickHouse's lexer
// reads back as the same name. Control characters are written as \xHH.
func (p *printer) ident(n name) {
	if !n.quoted && plainIdent(n.s) {
		p.w(n.s)
		return
	}
	p.b.WriteByte('`')
	p.escaped(n.s, '`')
	p.b.WriteByte('`')
}

// stringLit prints a string in quotes with every byte that could end or
// bend it escaped.
func (p *printer) stringLit(s *stringLit) {
	p.b.WriteByte('\'')
	p.escaped(s.value, '\'')
	p.b.WriteByte('\'')
}

func (p *printer) escaped(s string, q byte) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == q || c == '\\':
			p.b.WriteByte('\\')
			p.b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			p.b.WriteString(`\x`)
			p.b.WriteByte(hex[c>>4])
			p.b.WriteByte(hex[c&15])
		default:
			p.b.WriteByte(c)
		}
	}
}

// quoteForMessage quotes a name for an error message, shortened, valid
// UTF-8.
func quoteForMessage(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.QuoteToASCII(strings.ToValidUTF8(s, "?"))
}

// listed is a set's names, sorted, for a message.
func listed(m map[string]bool) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
