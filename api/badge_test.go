package api

import (
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestShortCount(t *testing.T) {
	f := func(n uint64, want string) {
		t.Helper()
		if got := shortCount(n); got != want {
			t.Errorf("shortCount(%d) = %q, want %q", n, got, want)
		}
	}
	f(0, "0")
	f(999, "999")
	f(1000, "1.0k")
	f(1999, "1.9k") // rounded down: never more views than had
	f(12345, "12.3k")
	f(99999, "99.9k")
	f(123456, "123k")
	f(999999, "999k")
	f(1000000, "1.0M")
	f(12345678, "12.3M")
	f(1234567890, "1.2B")
	f(1234567890123, "1.2T")
}

func TestBadge(t *testing.T) {
	f := newFixture(t)
	if _, _, err := f.sites.Add(context.Background(), "example.com"); err != nil {
		t.Fatal(err)
	}
	f.views(t, "example.com", "/post", 12345)
	f.views(t, "example.com", "/other", 7)

	w := f.get(t, "/badge/example.com.svg?page=/post/")
	if w.Code != 200 {
		t.Fatalf("badge: %d %s", w.Code, w.Body)
	}
	for k, v := range map[string]string{"Content-Type": "image/svg+xml", "Cache-Control": "public, max-age=10",
		"Access-Control-Allow-Origin": "*", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "default-src 'none'"} {
		if got := w.Header().Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	golden(t, "badge.svg", w.Body.Bytes())
	wellFormed(t, w.Body.String())

	// A label of the creator's, escaped: it cannot close the text or add
	// an element.
	w = f.get(t, "/badge/example.com.svg?page=/post&label=%3Cscript%3E%26+%22readers%22")
	golden(t, "badge_label.svg", w.Body.Bytes())
	wellFormed(t, w.Body.String())
	if strings.Contains(w.Body.String(), "<script") {
		t.Error("label not escaped")
	}

	// The whole site without a page; an unregistered site reads 0, at the
	// cost of a registered site's unseen page.
	if w := f.get(t, "/badge/example.com.svg"); !strings.Contains(w.Body.String(), `aria-label="views: 12.3k"`) {
		t.Errorf("site badge: %s", w.Body)
	}
	var n int64
	if n = f.queries(func() { w = f.get(t, "/badge/nope.example.svg?page=/post") }); n != 1 || w.Code != 200 ||
		!strings.Contains(w.Body.String(), `aria-label="views: 0"`) {
		t.Errorf("unknown site: %d queries, %d %s", n, w.Code, w.Body)
	}
	// Read again: from the snapshot.
	if n = f.queries(func() { w = f.get(t, "/badge/example.com.svg?page=/post") }); n != 0 {
		t.Errorf("second read: %d store queries", n)
	}

	// A refusal is a badge too, red, with the status and the message a
	// JSON error would carry: the <img> on the creator's page shows why.
	bad := func(path string, code int, label, msg string) {
		t.Helper()
		w := f.get(t, path)
		body := w.Body.String()
		if w.Code != code || w.Header().Get("Content-Type") != "image/svg+xml" || w.Header().Get("Content-Security-Policy") != "default-src 'none'" ||
			!strings.Contains(body, `aria-label="`+escapeXML(label+": "+msg)+`"`) || !strings.Contains(body, `fill="`+badgeRed+`"`) {
			t.Errorf("%s: %d %q %s, want %d, an SVG reading %q: %q in red", path, w.Code, w.Header().Get("Content-Type"), body, code, label, msg)
		}
		wellFormed(t, body)
	}
	bad("/badge/example.com", 404, "views", "not found: a badge is /badge/{site}.svg")
	bad("/badge/example.com.png", 404, "views", "not found: a badge is /badge/{site}.svg")
	bad("/badge/bad..site.svg", 400, "views", "site: not a domain name")
	bad("/badge/example.com.svg?page=%00", 400, "views", "page: bad input: control character")
	bad("/badge/example.com.svg?page=%00&label=reads", 400, "reads", "page: bad input: control character")
	bad("/badge/example.com.svg?label=%FF", 400, "views", "label: invalid UTF-8")
	bad("/badge/example.com.svg?label=a%0Ab", 400, "views", "label: control characters")
	bad("/badge/example.com.svg?label="+strings.Repeat("%C3%A9", 41), 400, "views", "label: longer than 40 characters")
	if w := f.get(t, "/badge/example.com.svg?label="+strings.Repeat("%C3%A9", 40)); w.Code != 200 {
		t.Errorf("40-character label: %d %s", w.Code, w.Body)
	}
	// An empty label (a template's unset variable) is no label: the
	// default. It answered a JSON 400 before, a broken image on the page.
	if w := f.get(t, "/badge/example.com.svg?page=/post&label="); w.Code != 200 || !strings.Contains(w.Body.String(), `aria-label="views: 12.3k"`) {
		t.Errorf("empty label: %d %s", w.Code, w.Body)
	}
}

// FuzzBadge: whatever a badge URL carries, the answer is an SVG (the count,
// or a refusal drawn in red with its 4xx), well-formed, with the badge's
// content policy: never JSON, which an <img> shows as a broken image.
func FuzzBadge(f *testing.F) {
	fx := newFixture(f)
	for _, s := range [][2]string{{"example.com.svg", "page=/a"}, {"example.com", ""}, {"bad..site.svg", ""}, {"example.com.svg", "label="},
		{"example.com.svg", "label=%FF"}, {"example.com.svg", "label=%3Cscript%3E"}, {"example.com.svg", "page=%00&label=x"},
		{"example.com.svg", "page=" + strings.Repeat("a", 5000)}, {"%E2%80%AE.svg", "label=%E2%80%AE"}, {"example.com.svg", "label=%"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, file, query string) {
		u := &url.URL{Path: "/badge/" + file, RawQuery: query}
		if strings.Contains(file, "/") || u.String() == "" {
			return // another route
		}
		w := httptest.NewRecorder()
		r, err := http.NewRequest(http.MethodGet, u.String(), nil)
		if err != nil {
			return // not a request a client can send
		}
		fx.srv.ServeHTTP(w, r)
		body := w.Body.String()
		if w.Code != 200 && w.Code != 400 && w.Code != 404 {
			t.Fatalf("%s: %d %s", u, w.Code, body)
		}
		if w.Header().Get("Content-Type") != "image/svg+xml" || w.Header().Get("Content-Security-Policy") != "default-src 'none'" ||
			!strings.HasPrefix(body, "<svg ") {
			t.Fatalf("%s: %d %q %q", u, w.Code, w.Header().Get("Content-Type"), body)
		}
		d := xml.NewDecoder(strings.NewReader(body))
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: not well-formed: %v\n%s", u, err, body)
			}
			if se, ok := tok.(xml.StartElement); ok && !badgeElements[se.Name.Local] {
				t.Fatalf("%s: element <%s> in %s", u, se.Name.Local, body)
			}
		}
	})
}

// badgeElements are the elements a badge is drawn with: nothing a label
// or a message can add (a script, a link, a foreign object).
var badgeElements = map[string]bool{"svg": true, "title": true, "linearGradient": true, "stop": true, "clipPath": true, "rect": true, "g": true, "text": true}

// TestBadgeWidths: the boxes follow the texts' widths, so a longer label
// or count makes a wider badge and each text sits centred in its box.
func TestBadgeWidths(t *testing.T) {
	f := func(label, value string, width, labelText, valueText string) {
		t.Helper()
		b, err := renderBadge(label, value, badgeBlue)
		if err != nil {
			t.Fatal(err)
		}
		svg := string(b)
		for _, want := range []string{`width="` + width + `" height="20"`, `textLength="` + labelText + `"`, `textLength="` + valueText + `"`} {
			if !strings.Contains(svg, want) {
				t.Errorf("%s | %s: no %s in\n%s", label, value, want, svg)
			}
		}
	}
	// Widths are DejaVu Sans advances at 11 px (badge_widths.go): "views"
	// is 31.062 px, a box 6 px of room each side of its rounded text.
	f("views", "0", "62", "31.1", "7")
	f("views", "12.3k", "86", "31.1", "30.9")
	f("readers", "999", "87", "42", "21")
	f("日本", "1", "53", "22", "7")
}

// TestBadgeMessageCut: a refusal's message longer than maxBadgeMessage
// characters is cut, ending in "…", so the badge's width never follows
// the message's length; one within it is drawn whole.
func TestBadgeMessageCut(t *testing.T) {
	long := strings.Repeat("é", maxBadgeMessage+20)
	b, err := renderBadge("views", long, badgeRed)
	if err != nil {
		t.Fatal(err)
	}
	if want := `aria-label="views: ` + strings.Repeat("é", maxBadgeMessage-1) + `…"`; !strings.Contains(string(b), want) {
		t.Errorf("a %d-character message: no %s in\n%s", maxBadgeMessage+20, want, b)
	}
	exact := strings.Repeat("x", maxBadgeMessage)
	if b, _ := renderBadge("views", exact, badgeRed); !strings.Contains(string(b), `aria-label="views: `+exact+`"`) {
		t.Errorf("a %d-character message was cut:\n%s", maxBadgeMessage, b)
	}
}

// wellFormed fails unless s parses as XML to its end.
func wellFormed(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		if _, err := d.Token(); err == io.EOF {
			return
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, s)
		}
	}
}
