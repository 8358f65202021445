package api

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
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

	bad := func(path string, code int, msg string) {
		t.Helper()
		w := f.get(t, path)
		var e struct{ Error string }
		if err := json.Unmarshal(w.Body.Bytes(), &e); w.Code != code || err != nil || e.Error != msg {
			t.Errorf("%s: %d %s, want %d %q", path, w.Code, w.Body, code, msg)
		}
	}
	bad("/badge/example.com", 404, "not found: a badge is /badge/{site}.svg")
	bad("/badge/example.com.png", 404, "not found: a badge is /badge/{site}.svg")
	bad("/badge/bad..site.svg", 400, "site: not a domain name")
	bad("/badge/example.com.svg?page=%00", 400, "page: bad input: control character")
	bad("/badge/example.com.svg?label=", 400, "label: empty")
	bad("/badge/example.com.svg?label=%FF", 400, "label: invalid UTF-8")
	bad("/badge/example.com.svg?label=a%0Ab", 400, "label: control characters")
	bad("/badge/example.com.svg?label="+strings.Repeat("%C3%A9", 41), 400, "label: longer than 40 characters")
	if w := f.get(t, "/badge/example.com.svg?label="+strings.Repeat("%C3%A9", 40)); w.Code != 200 {
		t.Errorf("40-character label: %d %s", w.Code, w.Body)
	}
}

// TestBadgeWidths: the boxes follow the texts' widths, so a longer label
// or count makes a wider badge and each text sits centred in its box.
func TestBadgeWidths(t *testing.T) {
	f := func(label, value string, width, labelText, valueText string) {
		t.Helper()
		b, err := renderBadge(label, value)
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
