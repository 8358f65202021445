package analyst

import (
	"strings"
)

// tokKind is a token's kind. The lexer follows ClickHouse's own
// (src/Parsers/Lexer.cpp) on every rule that decides where a token ends:
// comments ("--", "# ", "#!" to the end of the line; "/* */" nested),
// strings and quoted names (a backslash escapes the next byte, a doubled
// quote is a quote), heredocs ($tag$…$tag$), numbers. What it does not
// take (a byte outside ASCII beyond strings, names and comments, "@",
// "\G", a lone "!" or "|"), it refuses: the checks never guess.
type tokKind int

const (
	tEOF tokKind = iota
	tWord
	tNumber
	tString  // '…', with its body as written
	tHeredoc // $tag$…$tag$, its body raw
	tQuoted  // `…` or "…", with its body as written
	tLParen
	tRParen
	tLBracket
	tRBracket
	tLBrace
	tRBrace
	tComma
	tSemicolon
	tDot
	tStar
	tPlus
	tMinus
	tSlash
	tPercent
	tArrow // ->
	tQuestion
	tColon
	tDoubleColon
	tEquals    // = or ==
	tNotEq     // != or <>
	tLess      // <
	tGreater   // >
	tLessEq    // <=
	tGreatEq   // >=
	tSpaceship // <=>
	tConcat    // ||
)

// token is one token: its kind, its text as written (for tString,
// tQuoted and tHeredoc the body between the delimiters) and where it
// starts, for messages.
type token struct {
	kind tokKind
	text string
	pos  int
	// quote is the delimiter of a tQuoted token: '`' or '"'.
	quote byte
}

// lex splits text into tokens, dropping spaces and comments.
func lex(text string) ([]token, error) {
	var toks []token
	prev := tEOF
	for i := 0; i < len(text); {
		c := text[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '-' && i+1 < len(text) && text[i+1] == '-', c == '#' && i+1 < len(text) && (text[i+1] == ' ' || text[i+1] == '!'):
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			depth := 0
			for {
				if i+1 >= len(text) {
					return nil, lexError(start, "an unterminated comment")
				}
				switch {
				case text[i] == '/' && text[i+1] == '*':
					depth++
					i += 2
				case text[i] == '*' && text[i+1] == '/':
					depth--
					i += 2
				default:
					i++
				}
				if depth == 0 {
					break
				}
			}
			continue
		case isWordStart(c):
			for i < len(text) && isIdentByte(text[i]) {
				i++
			}
			if i < len(text) && text[i] == '$' {
				// The engine reads "a$b" as one name; refused rather than guessed.
				return nil, lexError(i, "'$' in a name")
			}
			toks = append(toks, token{kind: tWord, text: text[start:i], pos: start})
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9' && !endsOperand(prev):
			n, err := lexNumber(text, i)
			if err != nil {
				return nil, err
			}
			i = n
			toks = append(toks, token{kind: tNumber, text: text[start:i], pos: start})
		case c == '\'':
			end, err := quotedEnd(text, i, '\'')
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tString, text: text[i+1 : end-1], pos: start})
			i = end
		case c == '`' || c == '"':
			end, err := quotedEnd(text, i, c)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tQuoted, text: text[i+1 : end-1], pos: start, quote: c})
			i = end
		case c == '$':
			// A heredoc: $tag$ body $tag$, the tag word characters or none.
			j := i + 1
			for j < len(text) && isIdentByte(text[j]) {
				j++
			}
			if j >= len(text) || text[j] != '$' {
				return nil, lexError(start, "'$' outside a heredoc")
			}
			tag := text[i : j+1]
			k := strings.Index(text[j+1:], tag)
			if k < 0 {
				return nil, lexError(start, "an unterminated heredoc")
			}
			toks = append(toks, token{kind: tHeredoc, text: text[j+1 : j+1+k], pos: start})
			i = j + 1 + k + len(tag)
		default:
			kind, n := punct(text[i:])
			if n == 0 {
				if c >= 0x80 {
					return nil, lexError(start, "a character outside ASCII beyond strings, quoted names and comments")
				}
				return nil, lexError(start, "the character "+quoteForMessage(string(c)))
			}
			i += n
			toks = append(toks, token{kind: kind, text: text[start:i], pos: start})
		}
		prev = toks[len(toks)-1].kind
	}
	return append(toks, token{kind: tEOF, pos: len(text)}), nil
}

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// endsOperand reports whether a token of kind k ends an operand, after
// which ".5" is an element access, not a number (t.1 and (x).1).
func endsOperand(k tokKind) bool {
	switch k {
	case tRParen, tRBracket, tWord, tQuoted, tNumber:
		return true
	}
	return false
}

// lexNumber returns where the number starting at i ends: decimal with an
// optional point and exponent, hexadecimal (0x, with a p exponent) or
// binary (0b). A word character right after a number is refused (the
// engine would read "1abc" as a name).
func lexNumber(text string, i int) (int, error) {
	start := i
	digits := func(ok func(byte) bool) {
		for i < len(text) && ok(text[i]) {
			i++
		}
	}
	dec := func(c byte) bool { return c >= '0' && c <= '9' }
	hex := func(c byte) bool { return dec(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	switch {
	case i+2 < len(text) && text[i] == '0' && (text[i+1] == 'x' || text[i+1] == 'X') && hex(text[i+2]):
		i += 2
		digits(hex)
		if i < len(text) && text[i] == '.' {
			i++
			digits(hex)
		}
		if i+1 < len(text) && (text[i] == 'p' || text[i] == 'P') {
			i++
			if text[i] == '+' || text[i] == '-' {
				i++
			}
			digits(dec)
		}
	case i+2 < len(text) && text[i] == '0' && (text[i+1] == 'b' || text[i+1] == 'B') && (text[i+2] == '0' || text[i+2] == '1'):
		i += 2
		digits(func(c byte) bool { return c == '0' || c == '1' })
	default:
		digits(dec)
		if i < len(text) && text[i] == '.' {
			i++
			digits(dec)
		}
		if i+1 < len(text) && (text[i] == 'e' || text[i] == 'E') {
			j := i + 1
			if text[j] == '+' || text[j] == '-' {
				j++
			}
			if j < len(text) && dec(text[j]) {
				i = j
				digits(dec)
			}
		}
	}
	if i < len(text) && (isIdentByte(text[i]) || text[i] == '.') {
		return 0, lexError(start, "a malformed number")
	}
	return i, nil
}

// quotedEnd returns the index after the closing quote of the string or
// name opening at i, as ClickHouse's lexer finds it.
func quotedEnd(text string, i int, q byte) (int, error) {
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case q:
			if j+1 < len(text) && text[j+1] == q {
				j++
				continue
			}
			return j + 1, nil
		}
	}
	return 0, lexError(i, "an unterminated quoted string or name")
}

func punct(s string) (tokKind, int) {
	two := func(a, b byte) bool { return len(s) >= 2 && s[0] == a && s[1] == b }
	switch {
	case len(s) >= 3 && s[:3] == "<=>":
		return tSpaceship, 3
	case two('-', '>'):
		return tArrow, 2
	case two(':', ':'):
		return tDoubleColon, 2
	case two('=', '='):
		return tEquals, 2
	case two('!', '='), two('<', '>'):
		return tNotEq, 2
	case two('<', '='):
		return tLessEq, 2
	case two('>', '='):
		return tGreatEq, 2
	case two('|', '|'):
		return tConcat, 2
	}
	switch s[0] {
	case '(':
		return tLParen, 1
	case ')':
		return tRParen, 1
	case '[':
		return tLBracket, 1
	case ']':
		return tRBracket, 1
	case '{':
		return tLBrace, 1
	case '}':
		return tRBrace, 1
	case ',':
		return tComma, 1
	case ';':
		return tSemicolon, 1
	case '.':
		return tDot, 1
	case '*':
		return tStar, 1
	case '+':
		return tPlus, 1
	case '-':
		return tMinus, 1
	case '/':
		return tSlash, 1
	case '%':
		return tPercent, 1
	case '?':
		return tQuestion, 1
	case ':':
		return tColon, 1
	case '=':
		return tEquals, 1
	case '<':
		return tLess, 1
	case '>':
		return tGreater, 1
	}
	return 0, 0
}

func lexError(pos int, what string) error {
	return refuse(codeSyntax, "SYNTAX_ERROR", "at byte %d: %s", pos, what)
}

// unquote decodes the body of a string or quoted name as ClickHouse does:
// a doubled quote is one, and a backslash escapes the next byte (\n, \t,
// \0, \xHH and the like are the bytes they name; any other escaped byte
// stands for itself).
func unquote(body string, q byte) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == q && i+1 < len(body) && body[i+1] == q:
			b.WriteByte(q)
			i++
		case c == '\\' && i+1 < len(body):
			i++
			switch e := body[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case 'e':
				b.WriteByte(0x1b)
			case 'x':
				if i+2 >= len(body) || !isHex(body[i+1]) || !isHex(body[i+2]) {
					return "", false
				}
				b.WriteByte(hexVal(body[i+1])<<4 | hexVal(body[i+2]))
				i += 2
			default:
				b.WriteByte(e)
			}
		case c == '\\' || c == q:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
