package ingest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Text that is not valid Unicode is refused with a 400 naming the field,
// rather than decoded into U+FFFD and counted under a page nobody named
// (docs/public-api.md, POST /v1/events). Proper surrogate pairs and a real
// U+FFFD stay accepted.
func TestBeaconRefusesBrokenText(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	f := func(body string, status int, inBody string) {
		t.Helper()
		before := pub.reqs
		w := srv.beacon("application/json", body)
		if w.Code != status || !strings.Contains(w.Body.String(), inBody) {
			t.Errorf("%q: got %d %s, want %d with %q", body, w.Code, w.Body, status, inBody)
		}
		if status != http.StatusAccepted && pub.reqs != before {
			t.Errorf("%q: refused but published", body)
		}
	}
	for _, field := range []string{"site", "page", "referrer", "id"} {
		ev := func(v string) string {
			vals := map[string]string{"site": `"example.com"`, "page": `"/a"`}
			vals[field] = v
			var b strings.Builder
			b.WriteString("{")
			for _, k := range []string{"site", "page", "referrer", "id"} {
				if v, ok := vals[k]; ok {
					if b.Len() > 1 {
						b.WriteString(",")
					}
					b.WriteString(`"` + k + `":` + v)
				}
			}
			return b.String() + "}"
		}
		ok := ev(`"ok"`)
		if field == "site" {
			ok = ev(`"example.org"`)
		}
		if field == "page" || field == "referrer" {
			ok = ev(`"/x"`)
		}
		for _, bad := range []string{
			"\"/a\xff\"",             // a byte that is never UTF-8
			"\"/a\xed\xa0\x80\"",     // a surrogate encoded as UTF-8
			`"/a\ud800"`,             // a high surrogate at the end
			`"/a\udc00b"`,            // a low surrogate alone
			`"/a\ud800\u0041"`,       // a high surrogate then no low one
			`"/a\ud800\ud800\udc00"`, // a high surrogate before a pair
			`"/a\uDBFFz"`,            // upper-case hex
		} {
			f(ev(bad), 400, `"error":"`+field+`: invalid`)
			f("["+ok+","+ev(bad)+"]", 400, `"error":"events[1].`+field+`: invalid`)
		}
	}
	// The last of a repeated key is what encoding/json keeps, in any case.
	f(`{"site":"example.com","page":"/a\ud800","Page":"/b"}`, 202, `"accepted":1`)
	f(`{"site":"example.com","page":"/b","PAGE":"/a\ud800"}`, 400, `"error":"page: invalid`)
	// Unknown fields are not ours to judge.
	f(`{"site":"example.com","page":"/b","note":"\ud800"}`, 202, `"accepted":1`)
	// Valid text with escapes takes the encoding/json path and stays valid.
	f(`{"site":"example.com","page":"/\ud83d\ude00","referrer":"https://r.example/\ufffd"}`, 202, `"accepted":1`)
	f(`{"site":"example.com","page":"/\\ud800"}`, 202, `"accepted":1`) // an escaped backslash, not an escape
	f("{\"site\":\"example.com\",\"page\":\"/\xef\xbf\xbd\",\"id\":\"\\u0041\"}", 202, `"accepted":1`)
	evs := pub.events()
	want := []string{"/b", "/b", "/😀", `/\ud800`, "/\ufffd"}
	if len(evs) != len(want) {
		t.Fatalf("%d events published, want %d", len(evs), len(want))
	}
	for i, e := range evs {
		if e.Page != want[i] {
			t.Errorf("event %d: page %q, want %q", i, e.Page, want[i])
		}
	}
	if evs[2].Referrer != "https://r.example/%EF%BF%BD" {
		t.Errorf("referrer %q", evs[2].Referrer)
	}
}

// The pixel's parameters are percent-decoded: invalid UTF-8 in any of them
// is a 400, still answered with the GIF.
func TestPixelRefusesBrokenText(t *testing.T) {
	pub := newRecorder(t)
	srv := newTestServer(t, pub, fixedSalt(t, testSalt), func() time.Time { return testNow }, nil)
	for _, q := range []string{
		"site=example.com&page=/a%FF",
		"site=example.com&page=/a%ED%A0%80",
		"site=example.com%FF&page=/a",
		"site=example.com&page=/a&ref=https%3A%2F%2Fr.example%2F%FF",
		"site=example.com&page=/a&ref=%ED%A0%80",
		"site=example.com&page=/a&id=x%FF",
	} {
		checkGIF(t, srv.pixel(q), http.StatusBadRequest)
	}
	if pub.reqs != 0 {
		t.Fatalf("%d publishes of refused hits", pub.reqs)
	}
	// A referrer that is merely not a URL is dropped, not refused.
	checkGIF(t, srv.pixel("site=example.com&page=/a&ref=not+a+url"), http.StatusOK)
}
