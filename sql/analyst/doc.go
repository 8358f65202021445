// Package analyst decides what an analyst's SQL may run, before any engine
// sees it.
//
// Check parses the text with a ClickHouse SQL parser
// (github.com/AfterShip/clickhouse-sql-parser), walks the tree against
// allow-lists and prints the statement anew: one SELECT (or SHOW TABLES,
// SHOW DATABASES, DESCRIBE, EXPLAIN of a SELECT) over the store's database,
// the engine catalogues clients read on connect (system.tables,
// system.columns, …) and the table functions that read nothing
// (numbers(), values(), …), calling only the pure functions of
// functions.txt, with a FORMAT from Formats and SETTINGS from Settings.
// Everything else (a second statement, INTO OUTFILE, USE, SET, KILL,
// SYSTEM, file(), dictionaries, another database, an unknown node of the
// parse tree) is refused with a ClickHouse-shaped error.
//
// The engine never sees the analyst's text: only the printed one, whose
// identifiers, strings and numbers are written in a small lexical form that
// ClickHouse's lexer and the parser's agree on (no comments, quoted
// identifiers escaped, no heredocs), so a difference between the two
// parsers cannot hide a second statement, a clause or a function from the
// checks. Query.VerifyEngineAST gives the engine's own opinion on the
// printed text (EXPLAIN AST): it must be one statement of the kind checked,
// and every function and table the engine sees must pass the same lists.
//
// The package is pure: it reads no clock, no file and no engine; the
// caller runs EXPLAIN AST and the query.
package analyst
