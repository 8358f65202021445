package ingest

import (
	"net/url"
	"testing"
)

// scanQuery must read a query exactly as url.Values.Get on URL.Query()
// does, including the odd cases: repeats, bad escapes, ';', empty keys.
func TestScanQueryMatchesURLQuery(t *testing.T) {
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
		scanQuery(raw, pixelParams[:], got[:])
		for i, k := range pixelParams {
			if got[i] != q.Get(k) {
				t.Errorf("%q: %s = %q, url.Values says %q", raw, k, got[i], q.Get(k))
			}
		}
	}
}

func TestScanQueryAllocs(t *testing.T) {
	var vals [len(pixelParams)]string
	raw := "site=a.example&page=/blog/post&ref=https://news.example/&id=abc123&wd=0"
	if n := testing.AllocsPerRun(100, func() { scanQuery(raw, pixelParams[:], vals[:]) }); n != 0 {
		t.Errorf("%v allocations for a query that needs no unescaping", n)
	}
}
