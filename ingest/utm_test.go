package ingest

import (
	"strings"
	"testing"

	"github.com/viewcount/viewcount"
)

func TestParseUTM(t *testing.T) {
	f := func(page string, want viewcount.UTM) {
		t.Helper()
		if got := ParseUTM(page); got != want {
			t.Errorf("ParseUTM(%q)\n got %+v\nwant %+v", page, got, want)
		}
	}
	u := func(s, m, c string) viewcount.UTM { return viewcount.UTM{Source: s, Medium: m, Campaign: c} }
	f("/", u("", "", ""))
	f("/p?a=1&b=2", u("", "", ""))
	f("/p?utm_source=News&utm_medium=Email&utm_campaign=Spring%20Sale", u("news", "email", "spring sale"))
	f("https://example.com/p/?utm_source=twitter#utm_medium=x", u("twitter", "", "")) // the fragment is not the query
	f("/p?utm_campaign=black+friday+%2B+more", u("", "", "black friday + more"))      // "+" is a space, %2B a plus
	f("/p?utm_source=%C3%9Cber&utm_medium=%E2%80%8Bcpc", u("über", "\u200bcpc", ""))  // UTF-8 decoded, then lower-cased
	f("/p?utm_source=%FF%FE", u("", "", ""))                                          // invalid UTF-8: dropped, never stored
	f("/p?utm_source=a%00b", u("", "", ""))                                           // a control character: dropped
	f("/p?utm_source=100%&utm_medium=%zz", u("100%", "%zz", ""))                      // invalid escapes kept, as browsers do
	f("/p?utm_source=first&utm_source=second", u("first", "", ""))                    // URLSearchParams.get: the first
	f("/p?utm_source=&utm_source=second", u("", "", ""))                              // an empty first one still wins
	f("/p?UTM_SOURCE=x&utm_source", u("", "", ""))                                    // keys are exact; no value is empty
	f("/p?utm%5Fsource=encoded+key", u("encoded key", "", ""))                        // keys are decoded too
	f("/p?utm_source=%20%20padded%20", u("padded", "", ""))
	f("/p?x=1;utm_source=semi", u("", "", "")) // ';' does not separate (URLSearchParams)
	f("/p?x=1&&utm_medium=cpc&", u("", "cpc", ""))
	long := strings.Repeat("é", 100) // 200 bytes
	got := ParseUTM("/p?utm_source=" + long + "&utm_campaign=" + long)
	if got.Source != strings.Repeat("é", 32) || got.Campaign != strings.Repeat("é", 64) {
		t.Errorf("caps: source %d bytes, campaign %d bytes", len(got.Source), len(got.Campaign))
	}
	got = ParseUTM("/p?utm_medium=" + strings.Repeat("a", 63) + "é")
	if got.Medium != strings.Repeat("a", 63) { // cut before the two-byte rune, not inside it
		t.Errorf("cut inside a rune: %q", got.Medium)
	}
}

func FuzzParseUTM(f *testing.F) {
	f.Add("/p?utm_source=a&utm_medium=b&utm_campaign=c")
	f.Add("/p?utm_source=%C3")
	f.Fuzz(func(t *testing.T, page string) {
		u := ParseUTM(page)
		for _, v := range []struct {
			s   string
			max int
		}{{u.Source, MaxUTMSourceLen}, {u.Medium, MaxUTMMediumLen}, {u.Campaign, MaxUTMCampaignLen}} {
			if len(v.s) > v.max || checkText(v.s) != nil || v.s != strings.TrimSpace(v.s) {
				t.Fatalf("ParseUTM(%q) = %+v: value %q breaks the contract", page, u, v.s)
			}
		}
	})
}

// BenchmarkParseUTM is what every hit pays: a page without tags (nearly
// all) and one with all three.
func BenchmarkParseUTM(b *testing.B) {
	for _, c := range []struct{ name, page string }{
		{"none", "/blog/2026/some-post/?ref=home"},
		{"tagged", "/blog/2026/some-post/?utm_source=newsletter&utm_medium=email&utm_campaign=Spring+Sale+2026"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = ParseUTM(c.page)
			}
		})
	}
}
