package analyst

import (
	"strings"
)

// Operator precedences, lowest first, after ClickHouse's parser. The
// printer keeps the analyst's token order, so the engine's precedence is
// what decides the result; these only have to find each operand, name
// and subquery.
const (
	precLowest = iota
	precTernary
	precOr
	precAnd
	precNot
	precCompare
	precConcat
	precAddSub
	precMulDiv
	precUnary
)

// expr parses an expression, a lambda included.
func (p *parser) expr() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if params, paren, n := p.lambdaHead(); n > 0 {
		p.i += n
		body, err := p.expr()
		if err != nil {
			return nil, err
		}
		return &lambdaExpr{params: params, paren: paren, body: body}, nil
	}
	return p.binaryExpr(precTernary)
}

// lambdaHead recognises "x ->" and "(x, y) ->" and returns the names and
// how many tokens they take, or 0.
func (p *parser) lambdaHead() ([]name, bool, int) {
	word := func(t token) (name, bool) {
		switch t.kind {
		case tWord:
			return name{s: t.text}, true
		case tQuoted:
			s, ok := unquote(t.text, t.quote)
			return name{s: s, quoted: true}, ok
		}
		return name{}, false
	}
	if n, ok := word(p.peek()); ok && p.peekN(1).kind == tArrow {
		return []name{n}, false, 2
	}
	if !p.is(tLParen) {
		return nil, false, 0
	}
	var names []name
	for k := 1; ; k += 2 {
		n, ok := word(p.peekN(k))
		if !ok {
			return nil, false, 0
		}
		names = append(names, n)
		switch p.peekN(k + 1).kind {
		case tComma:
			continue
		case tRParen:
			if p.peekN(k+2).kind == tArrow {
				return names, true, k + 3
			}
		}
		return nil, false, 0
	}
}

// exprAlias parses an expression and an alias after it: "AS name", or with
// implicit a bare name that starts no clause.
func (p *parser) exprAlias(implicit bool) (expr, error) {
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	if p.accept("AS") {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		return &aliasExpr{x: x, alias: n, as: true}, nil
	}
	if implicit && (p.is(tQuoted) || p.is(tWord) && !clauseWords[strings.ToUpper(p.peek().text)]) {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		return &aliasExpr{x: x, alias: n}, nil
	}
	return x, nil
}

// exprList parses expressions separated by commas, each with an optional
// "AS name".
func (p *parser) exprList(implicit bool) ([]expr, error) {
	var out []expr
	for {
		x, err := p.exprAlias(implicit)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
		if !p.acceptTok(tComma) {
			return out, nil
		}
	}
}

// infix is the operator next, its precedence and its printed form; 0 when
// none follows.
func (p *parser) infix() (op string, prec, n int) {
	t := p.peek()
	switch t.kind {
	case tQuestion:
		return "?", precTernary, 1
	case tEquals:
		return "=", precCompare, 1
	case tNotEq:
		return "!=", precCompare, 1
	case tLess:
		return "<", precCompare, 1
	case tGreater:
		return ">", precCompare, 1
	case tLessEq:
		return "<=", precCompare, 1
	case tGreatEq:
		return ">=", precCompare, 1
	case tSpaceship:
		return "<=>", precCompare, 1
	case tConcat:
		return "||", precConcat, 1
	case tPlus:
		return "+", precAddSub, 1
	case tMinus:
		return "-", precAddSub, 1
	case tStar:
		return "*", precMulDiv, 1
	case tSlash:
		return "/", precMulDiv, 1
	case tPercent:
		return "%", precMulDiv, 1
	case tWord:
	default:
		return "", 0, 0
	}
	w := strings.ToUpper(t.text)
	w1 := strings.ToUpper(p.peekN(1).text)
	if p.peekN(1).kind != tWord {
		w1 = ""
	}
	w2 := strings.ToUpper(p.peekN(2).text)
	if p.peekN(2).kind != tWord {
		w2 = ""
	}
	switch w {
	case "OR":
		return "OR", precOr, 1
	case "AND":
		return "AND", precAnd, 1
	case "DIV", "MOD":
		return w, precMulDiv, 1
	case "LIKE", "ILIKE", "REGEXP", "IN", "BETWEEN":
		return w, precCompare, 1
	case "NOT":
		switch w1 {
		case "LIKE", "ILIKE", "IN", "BETWEEN", "REGEXP":
			return "NOT " + w1, precCompare, 2
		}
	case "GLOBAL":
		switch {
		case w1 == "IN":
			return "GLOBAL IN", precCompare, 2
		case w1 == "NOT" && w2 == "IN":
			return "GLOBAL NOT IN", precCompare, 3
		}
	case "IS":
		switch {
		case w1 == "NULL":
			return "IS NULL", precCompare, 2
		case w1 == "NOT" && w2 == "NULL":
			return "IS NOT NULL", precCompare, 3
		case w1 == "DISTINCT" && w2 == "FROM":
			return "IS DISTINCT FROM", precCompare, 3
		case w1 == "NOT" && w2 == "DISTINCT" && strings.EqualFold(p.peekN(3).text, "FROM"):
			return "IS NOT DISTINCT FROM", precCompare, 4
		}
	}
	return "", 0, 0
}

// binaryExpr parses operators of precedence min and above.
func (p *parser) binaryExpr(min int) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	left, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op, prec, n := p.infix()
		if n == 0 || prec < min {
			return left, nil
		}
		p.i += n
		switch op {
		case "?":
			a, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expect(tColon, "':'"); err != nil {
				return nil, err
			}
			b, err := p.binaryExpr(precTernary)
			if err != nil {
				return nil, err
			}
			left = &ternaryExpr{c: left, a: a, b: b}
		case "IS NULL", "IS NOT NULL":
			left = &isNullExpr{x: left, not: op == "IS NOT NULL"}
		case "BETWEEN", "NOT BETWEEN":
			lo, err := p.binaryExpr(precCompare + 1)
			if err != nil {
				return nil, err
			}
			if err := p.expectKw("AND"); err != nil {
				return nil, err
			}
			hi, err := p.binaryExpr(precCompare + 1)
			if err != nil {
				return nil, err
			}
			left = &betweenExpr{x: left, lo: lo, hi: hi, not: op == "NOT BETWEEN"}
		default:
			r, err := p.binaryExpr(prec + 1)
			if err != nil {
				return nil, err
			}
			left = &binaryExpr{op: op, l: left, r: r}
		}
	}
}

// unary parses NOT and minus before an operand, then the operand.
func (p *parser) unary() (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	switch {
	case p.kw("NOT") && !p.kwAt(1, "IN") && !p.kwAt(1, "LIKE") && !p.kwAt(1, "ILIKE") && !p.kwAt(1, "BETWEEN"):
		p.next()
		x, err := p.binaryExpr(precNot)
		if err != nil {
			return nil, err
		}
		return &unaryExpr{op: "NOT", x: x}, nil
	case p.is(tMinus):
		p.next()
		x, err := p.binaryExpr(precUnary)
		if err != nil {
			return nil, err
		}
		return &unaryExpr{op: "-", x: x}, nil
	}
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	switch x.(type) {
	case *starExpr, *columnsExpr: // nothing follows a column matcher
		return x, nil
	}
	return p.postfix(x)
}

// postfix parses what may follow an operand: ::Type, [index], .1, .name, .*
func (p *parser) postfix(x expr) (expr, error) {
	for {
		switch {
		case p.acceptTok(tDoubleColon):
			t, err := p.typeExpr()
			if err != nil {
				return nil, err
			}
			x = &castExpr{x: x, typ: t, form: "::"}
		case p.acceptTok(tLBracket):
			i, err := p.expr()
			if err != nil {
				return nil, err
			}
			if err := p.expect(tRBracket, "']'"); err != nil {
				return nil, err
			}
			x = &subscriptExpr{x: x, i: i}
		case p.is(tDot):
			next := p.peekN(1)
			switch {
			case next.kind == tNumber:
				p.i += 2
				x = &tupleAccessExpr{x: x, idx: next.text}
			case next.kind == tStar:
				id, ok := x.(*identExpr)
				if !ok {
					return nil, p.errExpected("a name before .*")
				}
				p.i += 2
				mods, err := p.columnMods()
				if err != nil {
					return nil, err
				}
				return &starExpr{qual: id.parts, mods: mods}, nil
			case next.kind == tWord || next.kind == tQuoted:
				p.next()
				n, err := p.name()
				if err != nil {
					return nil, err
				}
				if id, ok := x.(*identExpr); ok {
					id.parts = append(id.parts, n)
				} else {
					x = &tupleAccessExpr{x: x, idx: n.s}
					if n.quoted || !plainIdent(n.s) {
						return nil, p.errExpected("a plain name after '.'")
					}
				}
			default:
				return nil, p.errExpected("a name or a number after '.'")
			}
		default:
			return x, nil
		}
	}
}

func (p *parser) primary() (expr, error) {
	t := p.peek()
	switch t.kind {
	case tNumber:
		p.next()
		return &numberLit{text: t.text}, nil
	case tString, tHeredoc:
		return p.stringToken()
	case tLBrace:
		return p.braces()
	case tLBracket:
		p.next()
		a := &arrayExpr{}
		if !p.is(tRBracket) {
			items, err := p.exprList(false)
			if err != nil {
				return nil, err
			}
			a.items = items
		}
		return a, p.expect(tRBracket, "']'")
	case tLParen:
		if p.kwAt(1, "SELECT") || p.kwAt(1, "WITH") {
			p.next()
			q, err := p.selectUnion()
			if err != nil {
				return nil, err
			}
			return &subqueryExpr{q: q}, p.expect(tRParen, "')'")
		}
		p.next()
		pe := &parenExpr{}
		for !p.is(tRParen) {
			x, err := p.exprAlias(false)
			if err != nil {
				return nil, err
			}
			pe.items = append(pe.items, x)
			if !p.acceptTok(tComma) {
				break
			}
			if p.is(tRParen) {
				pe.trailing = true
			}
		}
		return pe, p.expect(tRParen, "')'")
	case tStar:
		p.next()
		mods, err := p.columnMods()
		if err != nil {
			return nil, err
		}
		return &starExpr{mods: mods}, nil
	case tQuestion:
		return nil, unsupported("a '?' placeholder (use {name:Type})")
	case tQuoted:
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		if p.is(tLParen) {
			return p.callRest(n)
		}
		return &identExpr{parts: []name{n}}, nil
	case tWord:
	default:
		return nil, p.errExpected("an expression")
	}
	w := strings.ToUpper(t.text)
	next := p.peekN(1)
	switch {
	case (w == "NULL" || w == "TRUE" || w == "FALSE") && next.kind != tLParen && next.kind != tDot:
		p.next()
		return &keywordLit{kw: w}, nil
	case w == "CASE":
		return p.caseExpr()
	case w == "CAST" && next.kind == tLParen:
		return p.cast()
	case w == "INTERVAL" && next.kind != tLParen && next.kind != tDot && next.kind != tComma && next.kind != tRParen:
		p.next()
		var x expr
		var err error
		if p.is(tString) {
			x, err = p.stringToken()
		} else {
			x, err = p.binaryExpr(precUnary)
		}
		if err != nil {
			return nil, err
		}
		ie := &intervalExpr{x: x}
		if p.is(tWord) && intervalUnit(p.peek().text) {
			ie.unit = strings.ToUpper(p.next().text)
		} else if _, ok := x.(*stringLit); !ok {
			return nil, p.errExpected("an interval unit")
		}
		return ie, nil
	case (w == "DATE" || w == "TIMESTAMP") && next.kind == tString:
		p.next()
		s, err := p.stringToken()
		if err != nil {
			return nil, err
		}
		return &typedLit{kw: w, lit: s}, nil
	case w == "COLUMNS" && next.kind == tLParen:
		p.i += 2
		args, err := p.exprList(false)
		if err != nil {
			return nil, err
		}
		if err := p.expect(tRParen, "')'"); err != nil {
			return nil, err
		}
		mods, err := p.columnMods()
		if err != nil {
			return nil, err
		}
		return &columnsExpr{args: args, mods: mods}, nil
	}
	n, err := p.name()
	if err != nil {
		return nil, err
	}
	if p.is(tLParen) {
		return p.callRest(n)
	}
	return &identExpr{parts: []name{n}}, nil
}

func intervalUnit(w string) bool {
	return intervalUnits[strings.TrimSuffix(strings.ToUpper(w), "S")]
}

// braces is {name:Type}, a query parameter.
func (p *parser) braces() (expr, error) {
	p.next()
	if (p.is(tWord) || p.is(tQuoted)) && p.peekN(1).kind == tColon {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		p.next()
		t, err := p.typeExpr()
		if err != nil {
			return nil, err
		}
		if n.quoted || !plainIdent(n.s) {
			return nil, unsupported("this query parameter name")
		}
		return &paramExpr{name: n.s, typ: t}, p.expect(tRBrace, "'}'")
	}
	return nil, p.errExpected("a query parameter {name:Type} (the engine has no map literal in braces; use map(…))")
}

func (p *parser) caseExpr() (expr, error) {
	p.next()
	c := &caseExpr{}
	var err error
	if !p.kw("WHEN") {
		if c.subject, err = p.expr(); err != nil {
			return nil, err
		}
	}
	for p.accept("WHEN") {
		w, err := p.expr()
		if err != nil {
			return nil, err
		}
		if err := p.expectKw("THEN"); err != nil {
			return nil, err
		}
		t, err := p.expr()
		if err != nil {
			return nil, err
		}
		c.whens, c.then = append(c.whens, w), append(c.then, t)
	}
	if len(c.whens) == 0 {
		return nil, p.errExpected("WHEN")
	}
	if p.accept("ELSE") {
		if c.els, err = p.expr(); err != nil {
			return nil, err
		}
	}
	return c, p.expectKw("END")
}

func (p *parser) cast() (expr, error) {
	p.i += 2 // CAST (
	x, err := p.expr()
	if err != nil {
		return nil, err
	}
	c := &castExpr{x: x}
	switch {
	case p.accept("AS"):
		c.form = "AS"
		if c.typ, err = p.typeExpr(); err != nil {
			return nil, err
		}
	case p.acceptTok(tComma):
		c.form = ","
		if c.str, err = p.stringToken(); err != nil {
			return nil, err
		}
	default:
		return nil, p.errExpected("AS or ',' in CAST")
	}
	return c, p.expect(tRParen, "')'")
}

// callRest parses a function call after its name: the arguments, the
// special forms of a few functions (EXTRACT(DAY FROM d), SUBSTRING(s FROM
// 1 FOR 2), POSITION(a IN b), TRIM(BOTH ' ' FROM s)), a parametric
// aggregate's second parentheses, and NULLS, FILTER and OVER after it.
func (p *parser) callRest(n name) (expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	c := &callExpr{fn: n}
	if err := p.expect(tLParen, "'('"); err != nil {
		return nil, err
	}
	var err error
	special := false
	if !n.quoted {
		special, err = p.specialArgs(c)
		if err != nil {
			return nil, err
		}
	}
	if !special {
		if c.distinct, c.args, err = p.callArgs(); err != nil {
			return nil, err
		}
	}
	if err := p.expect(tRParen, "')'"); err != nil {
		return nil, err
	}
	if p.is(tLParen) && !special {
		p.next()
		if c.distinct {
			return nil, unsupported("DISTINCT in a parametric function's parameters")
		}
		c.params, c.hasParams = c.args, true
		if c.distinct, c.args, err = p.callArgs(); err != nil {
			return nil, err
		}
		if err := p.expect(tRParen, "')'"); err != nil {
			return nil, err
		}
	}
	switch {
	case p.accept("RESPECT", "NULLS"):
		c.nulls = "RESPECT NULLS"
	case p.accept("IGNORE", "NULLS"):
		c.nulls = "IGNORE NULLS"
	}
	if p.kw("FILTER") && p.peekN(1).kind == tLParen && p.kwAt(2, "WHERE") {
		p.i += 3
		if c.filter, err = p.expr(); err != nil {
			return nil, err
		}
		if err := p.expect(tRParen, "')'"); err != nil {
			return nil, err
		}
	}
	if p.accept("OVER") {
		if p.is(tLParen) {
			if c.over, err = p.windowSpec(); err != nil {
				return nil, err
			}
		} else {
			on, err := p.name()
			if err != nil {
				return nil, err
			}
			c.overName = &on
		}
	}
	return c, nil
}

func (p *parser) callArgs() (bool, []expr, error) {
	if p.kw("SELECT") || p.kw("WITH") { // EXISTS(SELECT …)
		q, err := p.selectUnion()
		if err != nil {
			return false, nil, err
		}
		return false, []expr{&subqueryExpr{q: q, bare: true}}, nil
	}
	distinct := p.accept("DISTINCT")
	if !distinct {
		p.accept("ALL")
	}
	if p.is(tRParen) {
		return distinct, nil, nil
	}
	args, err := p.exprList(false)
	return distinct, args, err
}

// specialArgs parses the argument syntax of EXTRACT, SUBSTRING, POSITION
// and TRIM when it is not a plain list, and reports whether it did.
func (p *parser) specialArgs(c *callExpr) (bool, error) {
	switch strings.ToUpper(c.fn.s) {
	case "EXTRACT":
		if p.is(tWord) && intervalUnit(p.peek().text) && p.kwAt(1, "FROM") {
			c.lead = strings.ToUpper(p.next().text) + " FROM"
			p.next()
			x, err := p.expr()
			if err != nil {
				return false, err
			}
			c.args = []expr{x}
			return true, nil
		}
	case "SUBSTRING", "SUBSTR":
		x, from, ok, err := p.keywordArgs(p.expr, "FROM")
		if !ok || err != nil {
			return false, err
		}
		c.args, c.seps = []expr{x, from}, []string{" FROM "}
		if p.accept("FOR") {
			n, err := p.expr()
			if err != nil {
				return false, err
			}
			c.args, c.seps = append(c.args, n), append(c.seps, " FOR ")
		}
		return true, nil
	case "POSITION":
		// The needle stops before IN, which would otherwise read as the
		// IN operator.
		x, in, ok, err := p.keywordArgs(func() (expr, error) { return p.binaryExpr(precConcat) }, "IN")
		if !ok || err != nil {
			return false, err
		}
		c.args, c.seps = []expr{x, in}, []string{" IN "}
		return true, nil
	case "TRIM":
		for _, w := range []string{"BOTH", "LEADING", "TRAILING"} {
			if p.accept(w) {
				c.lead = w
				chars, err := p.expr()
				if err != nil {
					return false, err
				}
				if err := p.expectKw("FROM"); err != nil {
					return false, err
				}
				x, err := p.expr()
				if err != nil {
					return false, err
				}
				c.args, c.seps = []expr{chars, x}, []string{" FROM "}
				return true, nil
			}
		}
	}
	return false, nil
}

// keywordArgs parses "x KW y" in a call's parentheses: x with first,
// then, when the word kw follows, y. It reports false, and rewinds, when
// kw does not follow.
func (p *parser) keywordArgs(first func() (expr, error), kw string) (x, y expr, ok bool, err error) {
	save := p.i
	if x, err = first(); err != nil {
		return nil, nil, false, err
	}
	if !p.accept(kw) {
		p.i = save
		return nil, nil, false, nil
	}
	if y, err = p.expr(); err != nil {
		return nil, nil, false, err
	}
	return x, y, true, nil
}

// columnMods parses EXCEPT and REPLACE after * or COLUMNS(…).
func (p *parser) columnMods() ([]columnMod, error) {
	var mods []columnMod
	for {
		var m columnMod
		switch {
		case p.kw("EXCEPT") && (p.peekN(1).kind == tLParen || p.peekN(1).kind == tWord || p.peekN(1).kind == tQuoted || p.peekN(1).kind == tString) && !p.kwAt(1, "SELECT"):
			m.kw = "EXCEPT"
		case p.kw("REPLACE") && p.peekN(1).kind == tLParen:
			m.kw = "REPLACE"
		case p.kw("APPLY"):
			return nil, unsupported("APPLY on columns")
		default:
			return mods, nil
		}
		p.next()
		if p.acceptTok(tLParen) {
			items, err := p.exprList(false)
			if err != nil {
				return nil, err
			}
			m.items = items
			if err := p.expect(tRParen, "')'"); err != nil {
				return nil, err
			}
		} else {
			x, err := p.primary()
			if err != nil {
				return nil, err
			}
			m.items = []expr{x}
		}
		mods = append(mods, m)
	}
}

// typeExpr parses a data type.
func (p *parser) typeExpr() (*typeExpr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	t := p.next()
	if t.kind != tWord {
		return nil, p.errExpected("a type name")
	}
	te := &typeExpr{name: t.text}
	if !p.acceptTok(tLParen) {
		return te, nil
	}
	te.hasArgs = true
	for !p.is(tRParen) {
		var a typeArg
		switch {
		case p.is(tString):
			s, err := p.stringToken()
			if err != nil {
				return nil, err
			}
			a.lit = s
			if p.acceptTok(tEquals) {
				v, err := p.unary()
				if err != nil {
					return nil, err
				}
				a.enumVal = v
			}
		case p.is(tNumber), p.is(tMinus):
			v, err := p.unary()
			if err != nil {
				return nil, err
			}
			a.lit = v
		case (p.is(tWord) || p.is(tQuoted)) && (p.peekN(1).kind == tWord || p.peekN(1).kind == tQuoted):
			n, err := p.name()
			if err != nil {
				return nil, err
			}
			a.field = &n
			if a.typ, err = p.typeExpr(); err != nil {
				return nil, err
			}
		default:
			sub, err := p.typeExpr()
			if err != nil {
				return nil, err
			}
			a.typ = sub
		}
		te.args = append(te.args, a)
		if !p.acceptTok(tComma) {
			break
		}
	}
	return te, p.expect(tRParen, "')'")
}
