package analyst

import (
	"strings"
)

// printer walks a parsed statement, checks every node against the
// allow-lists and writes it anew. It writes the analyst's tokens in their
// order (parentheses are nodes of their own), with names and strings in
// one canonical quoting, no comments and single spaces, so the engine
// parses the same tokens the checks saw.
type printer struct {
	b      strings.Builder
	q      Query
	limits Limits
	depth  int
	scopes []map[string]bool // names of the WITH … AS (SELECT …) tables in force
}

func (p *printer) w(s ...string) {
	for _, x := range s {
		p.b.WriteString(x)
	}
}

func readonlyRefusal(what string) error {
	return refuse(codeReadonly, "READONLY", "%s cannot run here: only SELECT, SHOW TABLES, SHOW DATABASES, SHOW CREATE TABLE, DESCRIBE, EXISTS and EXPLAIN of a SELECT", what)
}

func (p *printer) statement(st *statement) error {
	var err error
	switch {
	case st.sel != nil && st.explain != "":
		p.q.Kind = KindExplain
		p.w("EXPLAIN ", st.explain, " ")
		err = p.selectUnion(st.sel)
	case st.sel != nil:
		p.q.Kind = KindSelect
		err = p.selectUnion(st.sel)
	case st.show != nil:
		err = p.show(st.show)
	case st.describe != nil:
		p.q.Kind = KindDescribe
		p.w("DESCRIBE TABLE ")
		err = p.tableName(st.describe.table, false)
	case st.exists != nil:
		p.q.Kind = KindExists
		p.w("EXISTS TABLE ")
		err = p.tableName(st.exists, false)
	default:
		return refuse(211, "EMPTY_QUERY", "Empty query")
	}
	if err != nil {
		return err
	}
	if st.format != "" {
		f, ok := Format(st.format)
		if !ok {
			return refuse(codeFormat, "UNKNOWN_FORMAT", "format %s is not offered here", quoteForMessage(st.format))
		}
		p.q.Format = f
	}
	return p.settings(st.settings)
}

func (p *printer) show(s *showStmt) error {
	switch s.what {
	case "CREATE TABLE":
		p.q.Kind = KindShowCreate
		p.w("SHOW CREATE TABLE ")
		return p.tableName(s.table, false)
	case "TABLES":
		p.q.Kind = KindShowTables
		p.w("SHOW TABLES")
		if s.from != nil {
			if s.from[0].s != p.q.db {
				return denied("SHOW TABLES: only the tables of %s", p.q.db)
			}
			p.w(" FROM ")
			p.ident(s.from[0])
		}
	case "DATABASES":
		p.q.Kind = KindShowTables // the engine's tree names both ShowTables
		p.w("SHOW DATABASES")
	}
	if s.like != "" {
		if s.not {
			p.w(" NOT")
		}
		p.w(" ", s.like, " ")
		p.stringLit(s.pattern)
	}
	if s.limit != nil {
		p.w(" LIMIT ")
		return p.expr(s.limit)
	}
	return nil
}

// selectUnion prints SELECTs and their set operations.
func (p *printer) selectUnion(u *selectUnion) error {
	for _, part := range u.parts {
		if part.op != "" {
			p.w(" ", part.op, " ")
		}
		if part.paren != nil {
			p.w("(")
			if err := p.selectUnion(part.paren); err != nil {
				return err
			}
			p.w(")")
			continue
		}
		if err := p.selectStmt(part.sel); err != nil {
			return err
		}
	}
	return nil
}

func (p *printer) selectStmt(s *selectStmt) error {
	p.scopes = append(p.scopes, map[string]bool{})
	defer func() { p.scopes = p.scopes[:len(p.scopes)-1] }()
	if len(s.with) > 0 {
		p.w("WITH ")
		for i, it := range s.with {
			if i > 0 {
				p.w(", ")
			}
			if it.q != nil {
				p.ident(it.name)
				p.w(" AS (")
				if err := p.selectUnion(it.q); err != nil {
					return err
				}
				p.w(")")
				p.scopes[len(p.scopes)-1][it.name.s] = true
				continue
			}
			if err := p.expr(it.x); err != nil {
				return err
			}
			p.w(" AS ")
			p.ident(it.name)
		}
		p.w(" ")
	}
	p.w("SELECT")
	switch {
	case s.distinct:
		p.w(" DISTINCT")
		if s.distinctOn != nil {
			p.w(" ON (")
			if err := p.list(s.distinctOn); err != nil {
				return err
			}
			p.w(")")
		}
	case s.all:
		p.w(" ALL")
	}
	if s.top != nil {
		p.w(" TOP ")
		if err := p.expr(s.top); err != nil {
			return err
		}
		if s.topTies {
			p.w(" WITH TIES")
		}
	}
	p.w(" ")
	if err := p.list(s.items); err != nil {
		return err
	}
	if s.from != nil {
		p.w(" FROM ")
		if err := p.from(s.from); err != nil {
			return err
		}
	}
	if err := p.clause(" PREWHERE ", s.prewhere); err != nil {
		return err
	}
	if err := p.clause(" WHERE ", s.where); err != nil {
		return err
	}
	if g := s.groupBy; g != nil {
		if g.kind != "none" {
			p.w(" GROUP BY")
			if g.kind != "" {
				p.w(" ", g.kind)
			}
			if g.kind != "ALL" {
				if g.kind != "" {
					p.w(" (")
				} else {
					p.w(" ")
				}
				if err := p.list(g.items); err != nil {
					return err
				}
				if g.kind != "" {
					p.w(")")
				}
			}
		}
		for _, m := range g.mods {
			p.w(" ", m)
		}
	}
	if err := p.clause(" HAVING ", s.having); err != nil {
		return err
	}
	for i, wd := range s.window {
		if i == 0 {
			p.w(" WINDOW ")
		} else {
			p.w(", ")
		}
		p.ident(wd.name)
		p.w(" AS ")
		if err := p.windowSpec(wd.spec); err != nil {
			return err
		}
	}
	if err := p.clause(" QUALIFY ", s.qualify); err != nil {
		return err
	}
	if s.orderBy != nil {
		p.w(" ORDER BY ")
		if err := p.orderItems(s.orderBy); err != nil {
			return err
		}
		if ip := s.interpolate; ip != nil {
			p.w(" INTERPOLATE")
			if ip.paren {
				p.w(" (")
				for i, c := range ip.cols {
					if i > 0 {
						p.w(", ")
					}
					p.ident(c)
					if ip.exprs[i] != nil {
						p.w(" AS ")
						if err := p.expr(ip.exprs[i]); err != nil {
							return err
						}
					}
				}
				p.w(")")
			}
		}
	}
	for _, l := range []*limitClause{s.limitBy, s.limit} {
		if l == nil {
			continue
		}
		p.w(" LIMIT ")
		if l.comma {
			if err := p.seq(l.offset, ", ", l.n); err != nil {
				return err
			}
		} else {
			if err := p.expr(l.n); err != nil {
				return err
			}
			if err := p.clause(" OFFSET ", l.offset); err != nil {
				return err
			}
		}
		if l.ties {
			p.w(" WITH TIES")
		}
		if l.by != nil {
			p.w(" BY ")
			if err := p.list(l.by); err != nil {
				return err
			}
		}
	}
	if l := s.offset; l != nil {
		if err := p.clause(" OFFSET ", l.offset); err != nil {
			return err
		}
		if l.rows != "" {
			p.w(" ", l.rows)
		}
		if l.fetch != "" {
			kw, rest, _ := strings.Cut(l.fetch, " %s ")
			p.w(" FETCH ", kw, " ")
			if err := p.expr(l.fetchN); err != nil {
				return err
			}
			p.w(" ", rest)
		}
	}
	return p.settings(s.settings)
}

func (p *printer) clause(kw string, x expr) error {
	if x == nil {
		return nil
	}
	p.w(kw)
	return p.expr(x)
}

func (p *printer) orderItems(items []orderItem) error {
	for i, it := range items {
		if i > 0 {
			p.w(", ")
		}
		if err := p.expr(it.x); err != nil {
			return err
		}
		if it.dir != "" {
			p.w(" ", it.dir)
		}
		if it.nulls != "" {
			p.w(" NULLS ", it.nulls)
		}
		if it.collate != nil {
			p.w(" COLLATE ")
			p.stringLit(it.collate)
		}
		if f := it.fill; f != nil {
			p.w(" WITH FILL")
			for _, c := range []struct {
				kw string
				x  expr
			}{{" FROM ", f.from}, {" TO ", f.to}, {" STEP ", f.step}, {" STALENESS ", f.staleness}} {
				if err := p.clause(c.kw, c.x); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (p *printer) windowSpec(w *windowSpec) error {
	p.w("(")
	sep := ""
	if w.base != nil {
		p.ident(*w.base)
		sep = " "
	}
	if w.partition != nil {
		p.w(sep, "PARTITION BY ")
		if err := p.list(w.partition); err != nil {
			return err
		}
		sep = " "
	}
	if w.order != nil {
		p.w(sep, "ORDER BY ")
		if err := p.orderItems(w.order); err != nil {
			return err
		}
		sep = " "
	}
	if f := w.frame; f != nil {
		p.w(sep, f.kind, " ")
		if f.between {
			p.w("BETWEEN ")
		}
		if err := p.frameBound(f.from); err != nil {
			return err
		}
		if f.between {
			p.w(" AND ")
			if err := p.frameBound(f.to); err != nil {
				return err
			}
		}
	}
	p.w(")")
	return nil
}

func (p *printer) frameBound(b frameBound) error {
	if b.kw == "CURRENT ROW" {
		p.w(b.kw)
		return nil
	}
	if b.kw != "" {
		p.w(b.kw)
	} else if err := p.expr(b.x); err != nil {
		return err
	}
	p.w(" ", b.dir)
	return nil
}

// from prints FROM's tables and joins.
func (p *printer) from(f *fromClause) error {
	if err := p.tableRef(f.first); err != nil {
		return err
	}
	for _, j := range f.joins {
		if j.comma {
			p.w(", ")
		} else {
			p.w(" ", strings.Join(j.kw, " "), " ")
		}
		if j.arrays != nil {
			if err := p.list(j.arrays); err != nil {
				return err
			}
			continue
		}
		if err := p.tableRef(j.table); err != nil {
			return err
		}
		if err := p.clause(" ON ", j.on); err != nil {
			return err
		}
		if j.using != nil {
			p.w(" USING ")
			if j.usingParen {
				p.w("(")
			}
			if err := p.list(j.using); err != nil {
				return err
			}
			if j.usingParen {
				p.w(")")
			}
		}
	}
	return nil
}

func (p *printer) tableRef(t *tableRef) error {
	switch {
	case t.sub != nil:
		p.w("(")
		if err := p.selectUnion(t.sub); err != nil {
			return err
		}
		p.w(")")
	case t.fn != nil:
		if err := p.tableFunction(t.fn); err != nil {
			return err
		}
	default:
		if err := p.tableName(t.table, true); err != nil {
			return err
		}
	}
	if t.alias != nil {
		p.w(" AS ")
		p.ident(*t.alias)
	}
	if t.final {
		p.w(" FINAL")
	}
	if err := p.clause(" SAMPLE ", t.sample); err != nil {
		return err
	}
	return p.clause(" OFFSET ", t.offset)
}

// tableName prints a table the query reads and refuses one outside what
// analysts read. An unqualified name is a WITH table when one is in force
// (cte), else a table of the store's database, printed qualified so that
// no session state decides which.
func (p *printer) tableName(parts []name, cte bool) error {
	if len(parts) == 1 {
		if cte && p.isCTE(parts[0].s) {
			p.ident(parts[0])
			return nil
		}
		p.ident(name{s: p.q.db})
		p.w(".")
		p.ident(parts[0])
		return nil
	}
	if err := checkTable(p.q.db, parts[0].s, parts[1].s); err != nil {
		return err
	}
	p.ident(parts[0])
	p.w(".")
	p.ident(parts[1])
	return nil
}

func (p *printer) isCTE(n string) bool {
	for _, s := range p.scopes {
		if s[n] {
			return true
		}
	}
	return false
}

// checkTable refuses a table outside what analysts read.
func checkTable(own, db, table string) error {
	switch db {
	case own:
		return nil
	case "system":
		if systemTables[table] {
			return nil
		}
		return denied("reading system.%s is not allowed; of system, only %s", quoteForMessage(table), listed(systemTables))
	case "information_schema", "INFORMATION_SCHEMA":
		if informationSchemaTables[table] {
			return nil
		}
		return denied("reading %s.%s is not allowed", db, quoteForMessage(table))
	}
	return denied("reading database %s is not allowed; only %s, and of system and information_schema the catalogues", quoteForMessage(db), own)
}

func (p *printer) tableFunction(c *callExpr) error {
	if c.fn.quoted || !tableFunctions[c.fn.s] {
		return denied("table function %s() is not allowed; only %s", quoteForMessage(c.fn.s), listed(tableFunctions))
	}
	if c.hasParams || c.distinct || c.seps != nil || c.lead != "" || c.nulls != "" || c.filter != nil || c.over != nil || c.overName != nil {
		return unsupported("this table function call")
	}
	p.w(c.fn.s, "(")
	if err := p.list(c.args); err != nil {
		return err
	}
	p.w(")")
	return nil
}
