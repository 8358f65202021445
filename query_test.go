package viewcount

import (
	"net/url"
	"strings"
	"testing"
)

// The parameters the pixel reads (ingest's pixelParams).
var pixelParams = [...]string{"site", "page", "ref", "id", "wd"}

// QueryValues must read a query exactly as url.Values.Get on URL.Query()
// does, including the odd cases: repeats, bad escapes, ';', empty keys.
func TestQueryValuesMatchesURLQuery(t *testing.T) {
	for _, raw := range []string{
		"",
		"site=a.example&page=/x",
		"site=a.example&site=b.example",
		"page=%2Fa%20b&ref=https%3A%2F%2Fr.example%2F&id=x+y",
		"site=%zz&site=ok.example",       // the bad pair is skipped, the next one wins
		"si%74e=enc.example&site=second", // an escaped key is the same key
		"page=/a;b&page=/c",              // ';' makes a pair invalid
		"&&site=&page",                   // empty pairs and values
		"wd=1&wd=0",
		"id=%&id=good",
		"x=1&y=2&z=3&a=4&b=5&c=6&d=7&e=8&f=9&site=late.example&site=later",
		"ref=a=b=c",
	} {
		want := url.URL{RawQuery: raw}
		q := want.Query()
		var got [len(pixelParams)]string
		QueryValues(raw, pixelParams[:], got[:])
		for i, k := range pixelParams {
			if got[i] != q.Get(k) {
				t.Errorf("%q: %s = %q, url.Values says %q", raw, k, got[i], q.Get(k))
			}
		}
	}
}

func TestQueryValuesAllocs(t *testing.T) {
	var vals [len(pixelParams)]string
	raw := "site=a.example&page=/blog/post&ref=https://news.example/&id=abc123&wd=0"
	if n := testing.AllocsPerRun(100, func() { QueryValues(raw, pixelParams[:], vals[:]) }); n != 0 {
		t.Errorf("%v allocations for a query that needs no unescaping", n)
	}
}

// queryValue is QueryValues for one key, as the public count reads "page".
func queryValue(raw, name string) (string, bool) {
	var v [1]string
	found := QueryValues(raw, []string{name}, v[:]) != 0
	return v[0], found
}

// parseQueryGet is what queryValue must agree with: gin's c.GetQuery.
func parseQueryGet(raw, name string) (string, bool) {
	vs, _ := url.ParseQuery(raw)
	v, ok := vs[name]
	if !ok {
		return "", false
	}
	return v[0], true
}

func TestQueryValue(t *testing.T) {
	f := func(raw, want string, wantOK bool) {
		t.Helper()
		got, ok := queryValue(raw, "page")
		if got != want || ok != wantOK {
			t.Errorf("queryValue(%q) = %q, %v; want %q, %v", raw, got, ok, want, wantOK)
		}
		if ref, refOK := parseQueryGet(raw, "page"); got != ref || ok != refOK {
			t.Errorf("queryValue(%q) = %q, %v; url.ParseQuery says %q, %v", raw, got, ok, ref, refOK)
		}
	}
	f("", "", false)
	f("page=/blog/post", "/blog/post", true)
	f("ref=x&page=/a&utm=y", "/a", true)
	f("page=/a&page=/b", "/a", true)
	f("page", "", true)
	f("page=", "", true)
	f("page=a=b", "a=b", true)
	f("&&page=/a&", "/a", true)
	f("pages=/a", "", false)
	f("Page=/a", "", false)
	f("page=/a+b%2Fc", "/a b/c", true)
	f("page=%2", "", false)
	f("page=%zz&page=/b", "/b", true)
	f("pag%65=/a", "/a", true)
	f("pa+ge=/a", "", false)
	f("pa%zzge=/a&page=/b", "/b", true)
	f("page=/a;b&page=/c", "/c", true)
	f("x=1;y=2&page=/a", "/a", true)
	f("x=%zz&page=/a", "/a", true)
	f("page=%E2%82%AC", "€", true)
	f("page=%00", "\x00", true)
	f(strings.Repeat("x=1&", 100)+"page=/a", "/a", true)
	f(strings.Repeat("x=1&", 100)+"page=%zz&page=/a", "/a", true)
	f(strings.Repeat("&", 10000)+"page=/a", "", false) // over net/url's parameter limit
}

func TestQueryValueAllocs(t *testing.T) {
	n := testing.AllocsPerRun(100, func() {
		if v, ok := queryValue("ref=home&page=/blog/some-post", "page"); !ok || v != "/blog/some-post" {
			t.Fatalf("got %q, %v", v, ok)
		}
	})
	if n != 0 {
		t.Errorf("queryValue without escapes: %v allocs, want 0", n)
	}
}

func FuzzQueryValue(f *testing.F) {
	for _, s := range []string{"page=/a", "page=%zz&page=/b", "pag%65=a+b", "page=/a;b&page=c", "x&page&page=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := queryValue(raw, "page")
		if ref, refOK := parseQueryGet(raw, "page"); got != ref || ok != refOK {
			t.Errorf("queryValue(%q) = %q, %v; url.ParseQuery says %q, %v", raw, got, ok, ref, refOK)
		}
	})
}
