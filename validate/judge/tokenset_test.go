package judge

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// containsNaive is the definition tokenSet.in must agree with.
func containsNaive(s []byte, subs [][]byte) bool {
	for _, sub := range subs {
		if bytes.Contains(s, sub) {
			return true
		}
	}
	return false
}

func TestTokenSet(t *testing.T) {
	set := newTokenSet("ab", "abc", "x", "zz/")
	for s, want := range map[string]bool{
		"": false, "a": false, "b": false, "ab": true, "cab": true, "aab": true,
		"a b": false, "zz": false, "zz/": true, "yzz/1": true, "x": true, "..x..": true, "z/z": false,
	} {
		if got := set.in([]byte(s)); got != want {
			t.Errorf("in(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestTokenSetAgrees is the property over random strings spliced from the
// validator's own tokens, so that near misses (a token's first two bytes,
// a token cut short at the end) are common.
func TestTokenSetAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, set := range []*tokenSet{botTokens, suspectTokens, notInBrowsers} {
		for range 20_000 {
			var s []byte
			for range rng.IntN(6) {
				tok := set.all[rng.IntN(len(set.all))]
				s = append(s, tok[:1+rng.IntN(len(tok))]...)
				s = append(s, "ab /;(.-"[rng.IntN(8)])
			}
			if got, want := set.in(s), containsNaive(s, set.all); got != want {
				t.Fatalf("in(%q) = %v, want %v", s, got, want)
			}
		}
	}
}

// FuzzTokenSet checks the filtered scan against the plain definition on
// the validator's own token lists.
func FuzzTokenSet(f *testing.F) {
	for _, s := range []string{uaChromeAndroid, uaFirefoxWin, "curl/8.5.0", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "a@b", "+"} {
		f.Add(s)
	}
	sets := []*tokenSet{botTokens, suspectTokens, notInBrowsers}
	f.Fuzz(func(t *testing.T, s string) {
		low := appendLower(nil, s)
		for _, set := range sets {
			if got, want := set.in(low), containsNaive(low, set.all); got != want {
				t.Fatalf("in(%q) = %v, want %v", low, got, want)
			}
		}
	})
}
