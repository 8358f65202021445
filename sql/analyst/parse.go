package analyst

import (
	"strings"
)

// parser is a recursive-descent parser over the lexer's tokens for the
// statements an analyst may run. It is ours rather than a library's
// because the checks need a lexer that ends every token where
// ClickHouse's does and a tree the printer can write back token for token;
// the Go ClickHouse parser on the module proxy (AfterShip's, v0.5.6)
// lexes comments and quoted names differently and refuses syntax the
// project's clients send (numbers({n:UInt32}), NULLS FIRST, DATE '…',
// EXCEPT after UNION). Anything it does not know is a syntax error: the
// checks never pass what they did not parse.
type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekN(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

// kw reports whether the next token is the word w (any case).
func (p *parser) kw(w string) bool {
	t := p.peek()
	return t.kind == tWord && strings.EqualFold(t.text, w)
}

func (p *parser) kwAt(n int, w string) bool {
	t := p.peekN(n)
	return t.kind == tWord && strings.EqualFold(t.text, w)
}

// accept consumes the words ws if they come next, in order.
func (p *parser) accept(ws ...string) bool {
	for n, w := range ws {
		if !p.kwAt(n, w) {
			return false
		}
	}
	p.i += len(ws)
	return true
}

func (p *parser) expectKw(w string) error {
	if !p.accept(w) {
		return p.errExpected(w)
	}
	return nil
}

func (p *parser) is(k tokKind) bool { return p.peek().kind == k }

func (p *parser) acceptTok(k tokKind) bool {
	if p.is(k) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expect(k tokKind, what string) error {
	if !p.acceptTok(k) {
		return p.errExpected(what)
	}
	return nil
}

func (p *parser) errExpected(what string) error {
	t := p.peek()
	got := "the end of the query"
	if t.kind != tEOF {
		got = quoteForMessage(t.text)
	}
	return refuse(codeSyntax, "SYNTAX_ERROR", "at byte %d: expected %s, got %s", t.pos, what, got)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return refuse(codeTooDeep, "TOO_DEEP_AST", "the query nests more than %d levels", MaxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// parseStatement parses the whole text: one statement, then at most a
// semicolon.
func parseStatement(text string) (*statement, error) {
	toks, err := lex(text)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	st := &statement{}
	switch {
	case p.kw("SELECT"), p.kw("WITH"), p.is(tLParen):
		st.sel, err = p.selectUnion()
	case p.kw("EXPLAIN"):
		err = p.explain(st)
	case p.kw("SHOW"):
		st.show, err = p.show()
	case p.kw("DESCRIBE"), p.kw("DESC"):
		p.next()
		p.accept("TABLE")
		st.describe = &tableRef{}
		st.describe.table, err = p.tableName()
	case p.kw("EXISTS"):
		p.next()
		p.accept("TABLE")
		st.exists, err = p.tableName()
	case p.is(tEOF), p.is(tSemicolon):
		return nil, refuse(211, "EMPTY_QUERY", "Empty query")
	default:
		if w := strings.ToUpper(p.peek().text); p.is(tWord) && otherStatements[w] {
			return nil, readonlyRefusal(w)
		}
		return nil, p.errExpected("SELECT, WITH, SHOW, DESCRIBE, EXISTS or EXPLAIN")
	}
	if err != nil {
		return nil, err
	}
	if p.kw("INTO") {
		return nil, readonlyRefusal("INTO OUTFILE")
	}
	if p.accept("FORMAT") {
		t := p.next()
		if t.kind != tWord {
			return nil, p.errExpected("a format name")
		}
		st.format = t.text
		if p.accept("SETTINGS") {
			if st.settings, err = p.settings(); err != nil {
				return nil, err
			}
		}
	}
	if p.kw("INTO") {
		return nil, readonlyRefusal("INTO OUTFILE")
	}
	p.acceptTok(tSemicolon)
	if !p.is(tEOF) {
		if p.kw("SELECT") || p.kw("WITH") || p.is(tWord) && otherStatements[strings.ToUpper(p.peek().text)] {
			return nil, refuse(codeSyntax, "SYNTAX_ERROR", "one statement per query")
		}
		return nil, p.errExpected("the end of the query")
	}
	return st, nil
}

func (p *parser) explain(st *statement) error {
	p.next()
	switch {
	case p.accept("QUERY", "TREE"):
		st.explain = "QUERY TREE"
	case p.accept("AST"), p.accept("SYNTAX"), p.accept("PLAN"), p.accept("PIPELINE"), p.accept("ESTIMATE"):
		st.explain = strings.ToUpper(p.toks[p.i-1].text)
	default:
		st.explain = "PLAN"
	}
	if !(p.kw("SELECT") || p.kw("WITH") || p.is(tLParen)) {
		return p.errExpected("the SELECT to explain (EXPLAIN takes no settings here)")
	}
	var err error
	st.sel, err = p.selectUnion()
	return err
}

func (p *parser) show() (*showStmt, error) {
	p.next()
	s := &showStmt{}
	switch {
	case p.accept("TABLES"):
		s.what = "TABLES"
		if p.accept("FROM") || p.accept("IN") {
			n, err := p.name()
			if err != nil {
				return nil, err
			}
			s.from = []name{n}
		}
	case p.accept("DATABASES"):
		s.what = "DATABASES"
	case p.accept("CREATE"):
		p.accept("TABLE")
		s.what = "CREATE TABLE"
		var err error
		if s.table, err = p.tableName(); err != nil {
			return nil, err
		}
		return s, nil
	default:
		return nil, p.errExpected("TABLES, DATABASES or CREATE TABLE after SHOW")
	}
	if p.accept("NOT") {
		s.not = true
	}
	switch {
	case p.accept("LIKE"):
		s.like = "LIKE"
	case p.accept("ILIKE"):
		s.like = "ILIKE"
	}
	if s.like != "" {
		lit, err := p.stringToken()
		if err != nil {
			return nil, err
		}
		s.pattern = lit
	} else if s.not {
		return nil, p.errExpected("LIKE or ILIKE")
	}
	if p.accept("LIMIT") {
		var err error
		if s.limit, err = p.expr(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// selectUnion parses SELECTs joined by UNION, EXCEPT and INTERSECT.
func (p *parser) selectUnion() (*selectUnion, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	u := &selectUnion{}
	op := ""
	for {
		part := &selectPart{op: op}
		if p.acceptTok(tLParen) {
			inner, err := p.selectUnion()
			if err != nil {
				return nil, err
			}
			if err := p.expect(tRParen, "')'"); err != nil {
				return nil, err
			}
			part.paren = inner
		} else {
			sel, err := p.selectStmt()
			if err != nil {
				return nil, err
			}
			part.sel = sel
		}
		u.parts = append(u.parts, part)
		var w string
		switch {
		case p.kw("UNION"), p.kw("EXCEPT"), p.kw("INTERSECT"):
			w = strings.ToUpper(p.next().text)
		default:
			return u, nil
		}
		switch {
		case p.accept("ALL"):
			w += " ALL"
		case p.accept("DISTINCT"):
			w += " DISTINCT"
		}
		op = w
	}
}

// clauseWords end an expression list: the words that start the next
// clause, and so can be no implicit alias.
var clauseWords = map[string]bool{
	"FROM": true, "WHERE": true, "PREWHERE": true, "GROUP": true, "HAVING": true, "ORDER": true,
	"LIMIT": true, "OFFSET": true, "FETCH": true, "WINDOW": true, "QUALIFY": true, "SETTINGS": true,
	"FORMAT": true, "INTO": true, "UNION": true, "EXCEPT": true, "INTERSECT": true, "AS": true,
	"JOIN": true, "INNER": true, "LEFT": true, "RIGHT": true, "FULL": true, "CROSS": true, "OUTER": true,
	"ARRAY": true, "ON": true, "USING": true, "ANY": true, "ALL": true, "ASOF": true, "SEMI": true,
	"ANTI": true, "GLOBAL": true, "LOCAL": true, "PASTE": true, "FINAL": true, "SAMPLE": true, "BY": true,
	"ASC": true, "DESC": true, "ASCENDING": true, "DESCENDING": true, "NULLS": true, "COLLATE": true,
	"WITH": true, "AND": true, "OR": true, "NOT": true, "IS": true, "IN": true, "LIKE": true, "ILIKE": true,
	"BETWEEN": true, "THEN": true, "WHEN": true, "ELSE": true, "END": true, "OVER": true, "FILTER": true,
	"TO": true, "STEP": true, "STALENESS": true, "INTERPOLATE": true, "SELECT": true, "RESPECT": true,
	"IGNORE": true, "REGEXP": true, "DIV": true, "MOD": true, "FOR": true, "PARTITION": true, "ROWS": true,
	"RANGE": true, "GROUPS": true, "PRECEDING": true, "FOLLOWING": true, "CURRENT": true, "UNBOUNDED": true,
	"ROW": true, "FIRST": true, "NEXT": true, "ONLY": true, "TIES": true, "TOTALS": true, "ROLLUP": true,
	"CUBE": true, "EXISTS": true, "CASE": true, "INTERVAL": true, "DISTINCT": true, "TOP": true,
}

func (p *parser) selectStmt() (*selectStmt, error) {
	s := &selectStmt{}
	var err error
	if p.accept("WITH") {
		for {
			it, err := p.withItem()
			if err != nil {
				return nil, err
			}
			s.with = append(s.with, it)
			if !p.acceptTok(tComma) {
				break
			}
		}
	}
	if err := p.expectKw("SELECT"); err != nil {
		return nil, err
	}
	switch {
	case p.accept("DISTINCT"):
		s.distinct = true
		if p.accept("ON") {
			if err := p.expect(tLParen, "'('"); err != nil {
				return nil, err
			}
			if s.distinctOn, err = p.exprList(false); err != nil {
				return nil, err
			}
			if err := p.expect(tRParen, "')'"); err != nil {
				return nil, err
			}
		}
	case p.accept("ALL"):
		s.all = true
	}
	if p.accept("TOP") {
		if s.top, err = p.primary(); err != nil {
			return nil, err
		}
		s.topTies = p.accept("WITH", "TIES")
	}
	if s.items, err = p.selectItems(); err != nil {
		return nil, err
	}
	if p.accept("FROM") {
		if s.from, err = p.from(); err != nil {
			return nil, err
		}
	}
	if p.accept("PREWHERE") {
		if s.prewhere, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.accept("WHERE") {
		if s.where, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.accept("GROUP", "BY") {
		if s.groupBy, err = p.groupBy(); err != nil {
			return nil, err
		}
	}
	for _, m := range []string{"ROLLUP", "CUBE", "TOTALS"} {
		if p.kw("WITH") && p.kwAt(1, m) {
			if s.groupBy == nil {
				s.groupBy = &groupBy{kind: "none"}
			}
			p.i += 2
			s.groupBy.mods = append(s.groupBy.mods, "WITH "+m)
		}
	}
	if p.accept("HAVING") {
		if s.having, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.accept("WINDOW") {
		for {
			n, err := p.name()
			if err != nil {
				return nil, err
			}
			if err := p.expectKw("AS"); err != nil {
				return nil, err
			}
			spec, err := p.windowSpec()
			if err != nil {
				return nil, err
			}
			s.window = append(s.window, windowDef{name: n, spec: spec})
			if !p.acceptTok(tComma) {
				break
			}
		}
	}
	if p.accept("QUALIFY") {
		if s.qualify, err = p.expr(); err != nil {
			return nil, err
		}
	}
	if p.accept("ORDER", "BY") {
		if s.orderBy, err = p.orderItems(); err != nil {
			return nil, err
		}
		if p.accept("INTERPOLATE") {
			if s.interpolate, err = p.interpolate(); err != nil {
				return nil, err
			}
		}
	}
	for p.kw("LIMIT") {
		p.next()
		l, err := p.limit()
		if err != nil {
			return nil, err
		}
		if p.accept("BY") {
			if s.limitBy != nil || s.limit != nil {
				return nil, p.errExpected("one LIMIT BY, before LIMIT")
			}
			if l.by, err = p.exprList(false); err != nil {
				return nil, err
			}
			s.limitBy = l
			continue
		}
		if s.limit != nil {
			return nil, p.errExpected("one LIMIT")
		}
		s.limit = l
	}
	if s.limit == nil && p.accept("OFFSET") {
		l := &limitClause{}
		if l.offset, err = p.expr(); err != nil {
			return nil, err
		}
		switch {
		case p.accept("ROWS"):
			l.rows = "ROWS"
		case p.accept("ROW"):
			l.rows = "ROW"
		}
		if p.accept("FETCH") {
			var w string
			switch {
			case p.accept("FIRST"):
				w = "FIRST"
			case p.accept("NEXT"):
				w = "NEXT"
			default:
				return nil, p.errExpected("FIRST or NEXT")
			}
			if l.fetchN, err = p.expr(); err != nil {
				return nil, err
			}
			rows := "ROWS"
			if p.accept("ROW") {
				rows = "ROW"
			} else if err := p.expectKw("ROWS"); err != nil {
				return nil, err
			}
			switch {
			case p.accept("ONLY"):
				l.fetch = w + " %s " + rows + " ONLY"
			case p.accept("WITH", "TIES"):
				l.fetch = w + " %s " + rows + " WITH TIES"
			default:
				return nil, p.errExpected("ONLY or WITH TIES")
			}
		}
		s.offset = l
	}
	if p.accept("SETTINGS") {
		if s.settings, err = p.settings(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *parser) withItem() (withItem, error) {
	// name AS (SELECT …) is a table for the query; anything else is an
	// expression with a name.
	if (p.is(tWord) || p.is(tQuoted)) && p.kwAt(1, "AS") && p.peekN(2).kind == tLParen && (p.kwAt(3, "SELECT") || p.kwAt(3, "WITH")) {
		n, err := p.name()
		if err != nil {
			return withItem{}, err
		}
		p.next() // AS
		p.next() // (
		q, err := p.selectUnion()
		if err != nil {
			return withItem{}, err
		}
		if err := p.expect(tRParen, "')'"); err != nil {
			return withItem{}, err
		}
		return withItem{name: n, q: q}, nil
	}
	x, err := p.expr()
	if err != nil {
		return withItem{}, err
	}
	if err := p.expectKw("AS"); err != nil {
		return withItem{}, err
	}
	n, err := p.name()
	if err != nil {
		return withItem{}, err
	}
	return withItem{name: n, x: x}, nil
}

func (p *parser) selectItems() ([]expr, error) {
	var items []expr
	for {
		x, err := p.exprAlias(true)
		if err != nil {
			return nil, err
		}
		items = append(items, x)
		if !p.acceptTok(tComma) {
			return items, nil
		}
	}
}

func (p *parser) groupBy() (*groupBy, error) {
	g := &groupBy{}
	var err error
	switch {
	case p.kw("ALL") && !p.isListContinuation(1):
		p.next()
		g.kind = "ALL"
		return g, nil
	case p.kw("ROLLUP") && p.peekN(1).kind == tLParen, p.kw("CUBE") && p.peekN(1).kind == tLParen:
		g.kind = strings.ToUpper(p.next().text)
	case p.kw("GROUPING") && p.kwAt(1, "SETS"):
		p.i += 2
		g.kind = "GROUPING SETS"
	}
	if g.kind != "" {
		if err := p.expect(tLParen, "'('"); err != nil {
			return nil, err
		}
		if g.items, err = p.exprList(false); err != nil {
			return nil, err
		}
		return g, p.expect(tRParen, "')'")
	}
	g.items, err = p.exprList(false)
	return g, err
}

// isListContinuation reports whether the token n ahead continues an
// expression (so a word before it is a name, not ALL of GROUP BY ALL).
func (p *parser) isListContinuation(n int) bool {
	switch p.peekN(n).kind {
	case tComma, tDot, tLParen, tPlus, tMinus, tStar, tSlash, tPercent, tEquals, tNotEq, tLess, tGreater, tLessEq, tGreatEq, tConcat:
		return true
	}
	return false
}

func (p *parser) orderItems() ([]orderItem, error) {
	var items []orderItem
	for {
		var it orderItem
		var err error
		if it.x, err = p.expr(); err != nil {
			return nil, err
		}
		for _, d := range []string{"ASC", "DESC", "ASCENDING", "DESCENDING"} {
			if p.accept(d) {
				it.dir = d
				break
			}
		}
		if p.accept("NULLS") {
			switch {
			case p.accept("FIRST"):
				it.nulls = "FIRST"
			case p.accept("LAST"):
				it.nulls = "LAST"
			default:
				return nil, p.errExpected("FIRST or LAST")
			}
		}
		if p.accept("COLLATE") {
			if it.collate, err = p.stringToken(); err != nil {
				return nil, err
			}
		}
		if p.accept("WITH", "FILL") {
			f := &fill{}
			for _, c := range []struct {
				kw string
				to *expr
			}{{"FROM", &f.from}, {"TO", &f.to}, {"STEP", &f.step}, {"STALENESS", &f.staleness}} {
				if p.accept(c.kw) {
					if *c.to, err = p.expr(); err != nil {
						return nil, err
					}
				}
			}
			it.fill = f
		}
		items = append(items, it)
		if !p.acceptTok(tComma) {
			return items, nil
		}
	}
}

func (p *parser) interpolate() (*interpolate, error) {
	ip := &interpolate{}
	if !p.acceptTok(tLParen) {
		return ip, nil
	}
	ip.paren = true
	for !p.is(tRParen) {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		var x expr
		if p.accept("AS") {
			if x, err = p.expr(); err != nil {
				return nil, err
			}
		}
		ip.cols, ip.exprs = append(ip.cols, n), append(ip.exprs, x)
		if !p.acceptTok(tComma) {
			break
		}
	}
	return ip, p.expect(tRParen, "')'")
}

func (p *parser) limit() (*limitClause, error) {
	l := &limitClause{}
	var err error
	if l.n, err = p.expr(); err != nil {
		return nil, err
	}
	switch {
	case p.acceptTok(tComma):
		l.comma, l.offset = true, l.n
		if l.n, err = p.expr(); err != nil {
			return nil, err
		}
	case p.accept("OFFSET"):
		if l.offset, err = p.expr(); err != nil {
			return nil, err
		}
	}
	l.ties = p.accept("WITH", "TIES")
	return l, nil
}

func (p *parser) settings() ([]setting, error) {
	var out []setting
	for {
		t := p.next()
		if t.kind != tWord {
			return nil, p.errExpected("a setting's name")
		}
		if err := p.expect(tEquals, "'='"); err != nil {
			return nil, err
		}
		v, err := p.unary()
		if err != nil {
			return nil, err
		}
		out = append(out, setting{name: t.text, value: v})
		if !p.acceptTok(tComma) {
			return out, nil
		}
	}
}

// from parses FROM's tables and joins.
func (p *parser) from() (*fromClause, error) {
	first, err := p.tableRef()
	if err != nil {
		return nil, err
	}
	f := &fromClause{first: first}
	for {
		var j join
		switch {
		case p.acceptTok(tComma):
			j.comma = true
		case p.kw("ARRAY") && p.kwAt(1, "JOIN"), p.kw("LEFT") && p.kwAt(1, "ARRAY") && p.kwAt(2, "JOIN"):
			for !p.kw("JOIN") {
				j.kw = append(j.kw, strings.ToUpper(p.next().text))
			}
			p.next()
			j.kw = append(j.kw, "JOIN")
			for {
				x, err := p.exprAlias(true)
				if err != nil {
					return nil, err
				}
				j.arrays = append(j.arrays, x)
				if !p.acceptTok(tComma) {
					break
				}
			}
			f.joins = append(f.joins, j)
			continue
		default:
			for !p.kw("JOIN") && p.is(tWord) && joinWords[strings.ToUpper(p.peek().text)] {
				j.kw = append(j.kw, strings.ToUpper(p.next().text))
			}
			if !p.kw("JOIN") {
				if len(j.kw) > 0 {
					return nil, p.errExpected("JOIN")
				}
				return f, nil
			}
			p.next()
			j.kw = append(j.kw, "JOIN")
		}
		if j.table, err = p.tableRef(); err != nil {
			return nil, err
		}
		if !j.comma {
			switch {
			case p.accept("ON"):
				if j.on, err = p.expr(); err != nil {
					return nil, err
				}
			case p.accept("USING"):
				j.usingParen = p.acceptTok(tLParen)
				if j.using, err = p.exprList(false); err != nil {
					return nil, err
				}
				if j.usingParen {
					if err := p.expect(tRParen, "')'"); err != nil {
						return nil, err
					}
				}
			}
		}
		f.joins = append(f.joins, j)
	}
}

// joinWords are the words before JOIN.
var joinWords = map[string]bool{
	"GLOBAL": true, "LOCAL": true, "ANY": true, "ALL": true, "ASOF": true, "SEMI": true, "ANTI": true,
	"INNER": true, "LEFT": true, "RIGHT": true, "FULL": true, "OUTER": true, "CROSS": true, "PASTE": true,
}

func (p *parser) tableRef() (*tableRef, error) {
	t := &tableRef{}
	var err error
	switch {
	case p.is(tLParen):
		p.next()
		if t.sub, err = p.selectUnion(); err != nil {
			return nil, err
		}
		if err := p.expect(tRParen, "')'"); err != nil {
			return nil, err
		}
	case (p.is(tWord) || p.is(tQuoted)) && p.peekN(1).kind == tLParen:
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		c, err := p.callRest(n)
		if err != nil {
			return nil, err
		}
		t.fn = c.(*callExpr)
	default:
		if t.table, err = p.tableName(); err != nil {
			return nil, err
		}
	}
	p.tableTail(t)
	if p.accept("AS") {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		t.alias, t.as = &n, true
	} else if p.is(tQuoted) || p.is(tWord) && !clauseWords[strings.ToUpper(p.peek().text)] {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		t.alias = &n
	}
	p.tableTail(t)
	if p.accept("SAMPLE") {
		if t.sample, err = p.ratio(); err != nil {
			return nil, err
		}
		if p.accept("OFFSET") {
			if t.offset, err = p.ratio(); err != nil {
				return nil, err
			}
		}
	}
	return t, nil
}

func (p *parser) tableTail(t *tableRef) {
	if p.accept("FINAL") {
		t.final = true
	}
}

// ratio is SAMPLE's argument: a number, a fraction of numbers, or an
// expression the engine evaluates.
func (p *parser) ratio() (expr, error) { return p.binaryExpr(precMulDiv) }

// tableName is t or db.t.
func (p *parser) tableName() ([]name, error) {
	n, err := p.name()
	if err != nil {
		return nil, err
	}
	parts := []name{n}
	if p.acceptTok(tDot) {
		m, err := p.name()
		if err != nil {
			return nil, err
		}
		parts = append(parts, m)
	}
	return parts, nil
}

// name is a word or a quoted name.
func (p *parser) name() (name, error) {
	t := p.peek()
	switch t.kind {
	case tWord:
		p.next()
		return name{s: t.text}, nil
	case tQuoted:
		p.next()
		s, ok := unquote(t.text, t.quote)
		if !ok {
			return name{}, lexError(t.pos, "a malformed quoted name")
		}
		return name{s: s, quoted: true}, nil
	}
	return name{}, p.errExpected("a name")
}

func (p *parser) stringToken() (*stringLit, error) {
	t := p.peek()
	switch t.kind {
	case tString:
		p.next()
		s, ok := unquote(t.text, '\'')
		if !ok {
			return nil, lexError(t.pos, "a malformed string")
		}
		return &stringLit{value: s}, nil
	case tHeredoc:
		p.next()
		return &stringLit{value: t.text}, nil
	}
	return nil, p.errExpected("a string")
}

func (p *parser) windowSpec() (*windowSpec, error) {
	if err := p.expect(tLParen, "'('"); err != nil {
		return nil, err
	}
	w := &windowSpec{}
	var err error
	if (p.is(tWord) && !p.kw("PARTITION") && !p.kw("ORDER") && !p.kw("ROWS") && !p.kw("RANGE") && !p.kw("GROUPS")) || p.is(tQuoted) {
		n, err := p.name()
		if err != nil {
			return nil, err
		}
		w.base = &n
	}
	if p.accept("PARTITION", "BY") {
		if w.partition, err = p.exprList(false); err != nil {
			return nil, err
		}
	}
	if p.accept("ORDER", "BY") {
		if w.order, err = p.orderItems(); err != nil {
			return nil, err
		}
	}
	if p.kw("ROWS") || p.kw("RANGE") || p.kw("GROUPS") {
		f := &frame{kind: strings.ToUpper(p.next().text)}
		if p.accept("BETWEEN") {
			f.between = true
			if f.from, err = p.frameBound(); err != nil {
				return nil, err
			}
			if err := p.expectKw("AND"); err != nil {
				return nil, err
			}
			if f.to, err = p.frameBound(); err != nil {
				return nil, err
			}
		} else if f.from, err = p.frameBound(); err != nil {
			return nil, err
		}
		w.frame = f
	}
	return w, p.expect(tRParen, "')'")
}

func (p *parser) frameBound() (frameBound, error) {
	var b frameBound
	switch {
	case p.accept("CURRENT", "ROW"):
		b.kw = "CURRENT ROW"
		return b, nil
	case p.accept("UNBOUNDED"):
		b.kw = "UNBOUNDED"
	default:
		x, err := p.binaryExpr(precAddSub)
		if err != nil {
			return b, err
		}
		b.x = x
	}
	switch {
	case p.accept("PRECEDING"):
		b.dir = "PRECEDING"
	case p.accept("FOLLOWING"):
		b.dir = "FOLLOWING"
	default:
		return b, p.errExpected("PRECEDING or FOLLOWING")
	}
	return b, nil
}
