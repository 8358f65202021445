package analyst

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// MaxQueryBytes bounds the text Check parses, and MaxDepth how deeply the
// parser may recurse (about three levels a parenthesis): the parser and
// the printer recurse, so both keep their stacks, and a hostile query's
// cost, small.
const (
	MaxQueryBytes = 256 << 10
	MaxDepth      = 200
)

// Kind is the kind of statement a Query is, as the engine's EXPLAIN AST
// names its root.
type Kind string

// The statement kinds an analyst may run.
const (
	KindSelect     Kind = "SelectWithUnionQuery"
	KindShowTables Kind = "ShowTables" // SHOW TABLES and SHOW DATABASES
	KindShowCreate Kind = "ShowCreateTableQuery"
	KindDescribe   Kind = "DescribeQuery"
	KindExists     Kind = "ExistsTableQuery"
	KindExplain    Kind = "Explain"
)

// Limits are the operator's bounds for one analyst query; a query's
// SETTINGS may ask for less, never for more.
type Limits struct {
	MaxExecutionTime time.Duration
	MaxResultRows    uint64
	MaxMemoryUsage   uint64
}

// Policy says what one deployment lets analysts read.
type Policy struct {
	Database string // the store's database, the only one with data an analyst reads
	Limits   Limits
}

// Query is a statement Check cleared: only Check makes one, so a function
// that takes a Query (the store's read-only connection) cannot be handed
// text nobody checked.
type Query struct {
	text string
	// Kind is the statement's kind.
	Kind Kind
	// Format is the FORMAT the statement asked for, in the engine's
	// spelling, or "" (the caller's default then applies).
	Format string
	// MaxExecutionTime is a lower time limit the statement's SETTINGS asked
	// for, or 0; the caller bounds the whole request by it.
	MaxExecutionTime time.Duration

	db string
}

// Text is the statement as the engine must run it: printed from the
// checked tree, without FORMAT, without the limit settings, one statement.
func (q Query) Text() string { return q.text }

// Error is a refusal, worded as the engine words its own errors
// ("Code: N. DB::Exception: …. (NAME)") so callers answer both alike.
type Error struct {
	Code int
	Name string
	Msg  string
}

func (e *Error) Error() string {
	return "Code: " + strconv.Itoa(e.Code) + ". DB::Exception: analyst: " + e.Msg + ". (" + e.Name + ")"
}

// Refusal codes, the engine's own for the same condition.
const (
	codeSyntax       = 62
	codeTooDeep      = 167 // TOO_DEEP_AST
	codeTooLarge     = 229
	codeReadonly     = 164
	codeAccessDenied = 497
	codeFormat       = 73
	codeBadArguments = 36
)

func refuse(code int, name, format string, args ...any) error {
	return &Error{Code: code, Name: name, Msg: fmt.Sprintf(format, args...)}
}

func denied(format string, args ...any) error {
	return refuse(codeAccessDenied, "ACCESS_DENIED", format, args...)
}

func unsupported(what string) error {
	return refuse(codeSyntax, "SYNTAX_ERROR", "%s is not supported here", what)
}

// IsRefusal reports whether err is a refusal of Check or VerifyEngineAST.
func IsRefusal(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// Check parses text, refuses anything but one allowed statement and
// returns it printed anew.
func Check(text string, p Policy) (Query, error) {
	if p.Database == "" || !plainIdent(p.Database) {
		return Query{}, fmt.Errorf("analyst: policy: database %q", p.Database)
	}
	if len(text) > MaxQueryBytes {
		return Query{}, refuse(codeTooLarge, "QUERY_IS_TOO_LARGE", "query: at most %d bytes", MaxQueryBytes)
	}
	st, err := parseStatement(text)
	if err != nil {
		return Query{}, err
	}
	pr := &printer{q: Query{db: p.Database}, limits: p.Limits}
	if err := pr.statement(st); err != nil {
		return Query{}, err
	}
	pr.q.text = pr.b.String()
	return pr.q, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// plainIdent is an identifier ClickHouse's lexer reads bare, the same way
// the parser does: ASCII letters, digits and underscores, not starting
// with a digit.
func plainIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// otherStatements are the first words of statements an analyst may not
// run, some of which the parser does not know (KILL): refused as the
// engine's readonly=1 would refuse them, with the reason.
var otherStatements = map[string]bool{
	"KILL": true, "SYSTEM": true, "USE": true, "SET": true, "INSERT": true, "ALTER": true,
	"DROP": true, "CREATE": true, "TRUNCATE": true, "OPTIMIZE": true, "RENAME": true,
	"GRANT": true, "REVOKE": true, "ATTACH": true, "DETACH": true, "DELETE": true,
	"UPDATE": true, "EXCHANGE": true, "UNDROP": true, "BACKUP": true, "RESTORE": true,
	"WATCH": true, "MOVE": true, "CHECK": true, "REPLACE": true, "UNDO": true,
}
