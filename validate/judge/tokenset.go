package judge

import "bytes"

// tokenSet finds whether any of a fixed set of substrings occurs in a user
// agent in one pass: a position is checked against the tokens only when its
// first two bytes begin one (a 64 Kbit filter), so the cost grows with the
// user agent's length, not with the number of tokens. Uncached user agents
// (a rotation flood) pay it on every event.
type tokenSet struct {
	single [256]bool       // one-byte tokens
	pairs  [1 << 10]uint64 // bit c0<<8|c1 set when a token starts with c0 c1
	first  [256][][]byte   // tokens of two bytes or more, by first byte
	all    [][]byte
}

func newTokenSet(s ...string) *tokenSet {
	t := &tokenSet{all: tokens(s...)}
	for _, tok := range t.all {
		switch len(tok) {
		case 0:
			panic("validate: empty token")
		case 1:
			t.single[tok[0]] = true
		default:
			k := uint16(tok[0])<<8 | uint16(tok[1])
			t.pairs[k>>6] |= 1 << (k & 63)
			t.first[tok[0]] = append(t.first[tok[0]], tok)
		}
	}
	return t
}

// in reports whether s holds any of the tokens.
func (t *tokenSet) in(s []byte) bool { return t.find(s) != nil }

// find returns the first token s holds (by position in s), or nil.
func (t *tokenSet) find(s []byte) []byte {
	for i, c := range s {
		if t.single[c] {
			return s[i : i+1]
		}
		if i+1 == len(s) {
			break
		}
		k := uint16(c)<<8 | uint16(s[i+1])
		if t.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, tok := range t.first[c] {
			if bytes.HasPrefix(s[i:], tok) {
				return tok
			}
		}
	}
	return nil
}
