package judge

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

// defaultInApp is the in-app browser and web view list the browser model
// reads (see the file for its source and format).
//
//go:embed lists/inapp.txt
var defaultInApp string

// uaShape is what the browser model makes of a user agent.
type uaShape uint8

const (
	// shapeNone: not a shape the model knows (a client library's, a
	// script's, a crawler's own name, but also a browser or an app's web
	// view with a product the model has not heard of, an old engine, an
	// unusual platform). It is no evidence on its own: real browsers, web
	// views and in-app browsers append products all the time and new ones
	// appear every month. It is one weak signal, which needs company from
	// the request before a view is rejected (uaInfo.weak; headerMismatch).
	shapeNone uaShape = iota
	// shapeBrowser: a browser's own user agent.
	shapeBrowser
	// shapeInApp: a browser engine inside an app (in-app browser, Android
	// WebView, iOS WKWebView, Electron).
	shapeInApp
	// shapeImpossible: a sequence of engine and browser tokens no browser
	// sends, Chromium's product with no engine before it ("Mozilla/5.0
	// (Windows NT 10.0) Chrome/120"): positive evidence, as a crawler's
	// name is.
	shapeImpossible
)

// browserModel is a model of a browser's user agent:
//
//	Mozilla/5.0 (platform) engine/version [(KHTML, like Gecko)] product/version ... [in-app tail]
//
// where the engine is AppleWebKit or Gecko, the products are ones current
// browsers send (browserProducts) and at least one names a browser, and the
// tail, if any, is one that an in-app browser or web view appends (from the
// maintained list in lists/inapp.txt). What it recognises is a browser's
// for certain; what it does not (shapeNone) is only unrecognised, a weak
// signal, and a few token sequences are impossible (shapeImpossible).
//
// Its regexps run only when the product scan leaves an unknown token, so a
// plain browser costs one pass over the string; the verdict is memoised per
// UA by uaMatcher anyway. A browserModel is immutable and safe for
// concurrent use.
type browserModel struct {
	app      *regexp.Regexp // an app's tail after the browser's products
	webview  *regexp.Regexp // the whole UA is a web view's
	noSafari *regexp.Regexp // the platform of a web view when no Safari/ follows
}

// newBrowserModel reads an in-app list in lists/inapp.txt's format.
func newBrowserModel(list, name string) (*browserModel, error) {
	kinds := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(list))
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		f := strings.SplitN(s, " ", 3)
		if len(f) != 3 || strings.TrimSpace(f[2]) == "" {
			return nil, fmt.Errorf("validate: %s:%d: want \"kind key regexp\"", name, line)
		}
		switch f[0] {
		case "app", "webview", "webview-without-safari":
		default:
			return nil, fmt.Errorf("validate: %s:%d: unknown kind %q", name, line, f[0])
		}
		if _, err := regexp.Compile(f[2]); err != nil {
			return nil, fmt.Errorf("validate: %s:%d: %s: %w", name, line, f[1], err)
		}
		kinds[f[0]] = append(kinds[f[0]], f[2])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("validate: %s: %w", name, err)
	}
	var m browserModel
	for kind, re := range map[string]**regexp.Regexp{"app": &m.app, "webview": &m.webview, "webview-without-safari": &m.noSafari} {
		if len(kinds[kind]) == 0 {
			return nil, fmt.Errorf("validate: %s: no %q entries", name, kind)
		}
		// (?i) as inapp-spy's /i: the model matches the lowercased UA, and
		// lowercasing the patterns instead would turn \W or \S into \w or \s.
		*re = regexp.MustCompile("(?i)(?:" + strings.Join(kinds[kind], ")|(?:") + ")")
	}
	return &m, nil
}

// notInBrowsers are substrings no browser's user agent holds: a URL or a
// contact address is how crawlers, feed readers and scanners sign theirs.
var notInBrowsers = newTokenSet("://", "http", "www.", "@", "+")

// shape classifies a user agent, given as is and lowercased (low, of the
// same length). The regexps run on ua, being case-insensitive, so that low
// can stay on the caller's stack.
func (b *browserModel) shape(ua string, low []byte) uaShape {
	if notInBrowsers.in(low) {
		return shapeNone
	}
	if rest, ok := bytes.CutPrefix(low, []byte("opera/9.80 (")); ok {
		// Opera 12 (Presto) and Opera Mini still send this older shape.
		if bytes.Contains(rest, []byte(") presto/")) {
			return shapeBrowser
		}
		return shapeNone
	}
	const prefix = "mozilla/5.0 ("
	rest, ok := bytes.CutPrefix(low, []byte(prefix))
	if !ok {
		return shapeNone
	}
	platform, rest, ok := cutComment(rest)
	if !ok || len(bytes.TrimSpace(platform)) == 0 {
		return shapeNone
	}
	if bytes.Contains(platform, []byte("compatible")) {
		// "(compatible; SomeBot/1.0)". Internet Explorer said so too, and
		// bots still pose as it; it has had no share of traffic for years.
		return shapeNone
	}
	// Whether the UA is a web view's: asked only once an unknown token or
	// the end needs it, so a plain browser runs no regexp. iOS WKWebViews
	// are told by what they lack (wkWebView).
	wv := 0 // 0 not asked, 1 no, 2 yes
	webview := func() bool {
		if wv == 0 {
			wv = 1
			if b.webview.MatchString(ua) || wkWebView(low) && b.noSafari.MatchString(ua[len(prefix):len(prefix)+len(platform)]) {
				wv = 2
			}
		}
		return wv == 2
	}
	var engine, browser, inApp bool
	var tail []byte // from the first token that is not a browser's
	for !inApp {
		tok, after := nextToken(rest)
		if tok == nil {
			break
		}
		known := false
		if tok[0] == '(' {
			// WebKit's "(KHTML, like Gecko)" (some Chromium builds drop the
			// comma); Opera's "(Edition Yx 05)"; what a web view's app says
			// of itself, unless it is what crawlers say.
			known = bytes.Equal(tok, []byte("(khtml, like gecko)")) || bytes.Equal(tok, []byte("(khtml like gecko)")) ||
				bytes.HasPrefix(tok, []byte("(edition ")) ||
				!bytes.Contains(tok, []byte("compatible")) && webview()
		} else if name, version, ok := bytes.Cut(tok, []byte("/")); !ok {
			// "Mobile Safari", "TV Safari", Silk's "like Chrome/", Brave on
			// iOS appending "Brave" to Safari's string.
			switch string(tok) {
			case "mobile", "tv", "like", "brave":
				known = true
			}
		} else if kind, ok := browserProducts[string(name)]; ok && len(version) > 0 && '0' <= version[0] && version[0] <= '9' {
			known = true
			engine = engine || kind == prodEngine
			browser = browser || kind == prodBrowser
		} else {
			// A web view's app naming itself ("Slack/4.35 Chrome/...",
			// "NetType/WIFI Language/zh_CN").
			known = productName(name) && webview()
		}
		if !known {
			// Anything else must be an in-app browser's tail: the rest of
			// the string from the first product browsers do not send
			// names the app.
			if tail == nil {
				tail = rest
			}
			if !b.app.MatchString(ua[len(ua)-len(tail):]) {
				return shapeNone
			}
			inApp = true
		} else if tail == nil && wv == 2 && tok[0] != '(' && !isBrowserProduct(tok) {
			tail = rest
		}
		rest = after
	}
	switch {
	case !engine && bytes.Contains(low, []byte("chrome/")):
		// "Mozilla/5.0 (Windows NT 10.0) Chrome/120": every Chromium sends
		// AppleWebKit/ before its Chrome/ (old Firefox builds did ship
		// without Gecko/, so only Chromium's is impossible).
		return shapeImpossible
	case !engine:
		return shapeNone
	case inApp:
		return shapeInApp
	case browser && wv == 2:
		return shapeInApp // an app's product in a web view: Electron, Android WebView
	case browser:
		return shapeBrowser
	case webview():
		return shapeInApp // WKWebView: "... AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"
	}
	return shapeNone
}

// isBrowserProduct reports whether tok is one of browserProducts.
func isBrowserProduct(tok []byte) bool {
	name, _, _ := bytes.Cut(tok, []byte("/"))
	_, ok := browserProducts[string(name)]
	return ok
}

// wkWebView reports whether a lowercased UA has the engine of a WKWebView
// and none of a browser's products: WebKit without Safari/, Chrome/ or
// Firefox/.
func wkWebView(low []byte) bool {
	return bytes.Contains(low, []byte("applewebkit/")) && !bytes.Contains(low, []byte("safari/")) &&
		!bytes.Contains(low, []byte("chrome/")) && !bytes.Contains(low, []byte("firefox/"))
}

// cutComment splits "platform) rest" at the parenthesis that closes the
// platform comment, allowing one nested pair ("moto g power (2022)").
func cutComment(s []byte) (comment, rest []byte, ok bool) {
	depth := 0
	for i, c := range s {
		switch c {
		case '(':
			if depth++; depth > 1 {
				return nil, nil, false
			}
		case ')':
			if depth == 0 {
				return s[:i], s[i+1:], true
			}
			depth--
		}
	}
	return nil, nil, false
}

// nextToken splits the next token off what follows the platform comment: a
// product ("name/version", or a bare word) up to a space, or a whole
// comment "(...)". tok is nil at the end. A product with a parenthesis
// glued to it ("Safari/1(bot)") is returned whole, and no browser product
// looks like that.
func nextToken(s []byte) (tok, rest []byte) {
	s = bytes.TrimLeft(s, " ")
	if len(s) == 0 {
		return nil, nil
	}
	if s[0] == '(' {
		if j := bytes.IndexByte(s, ')'); j >= 0 {
			return s[:j+1], s[j+1:]
		}
		return s, nil
	}
	if j := bytes.IndexByte(s, ' '); j >= 0 {
		return s[:j], s[j:]
	}
	return s, nil
}

// productName reports whether name can be an app's product name in a web
// view: letters, digits, '.', '-', '_' only (no comment, no ';').
func productName(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

type productKind uint8

const (
	prodOther   productKind = iota // a platform or build token
	prodEngine                     // a rendering engine
	prodBrowser                    // names a browser
)

// browserProducts are the product tokens browsers put after the platform
// comment (lowercase, before the '/'). Only browsers whose share of traffic
// is worth a line; an app's web view naming itself is accepted through the
// in-app list instead.
var browserProducts = map[string]productKind{
	"applewebkit": prodEngine, "gecko": prodEngine,
	"version": prodOther, "mobile": prodOther, "kaios": prodOther,
	// Chromium, Firefox and Safari, and the browsers built on them.
	"chrome": prodBrowser, "chromium": prodBrowser, "safari": prodBrowser, "firefox": prodBrowser,
	"crios": prodBrowser, "fxios": prodBrowser, "edg": prodBrowser, "edga": prodBrowser,
	"edgios": prodBrowser, "edge": prodBrowser, "opr": prodBrowser, "opt": prodBrowser,
	"opios": prodBrowser, "samsungbrowser": prodBrowser, "yabrowser": prodBrowser,
	"yowser": prodBrowser, "vivaldi": prodBrowser, "ucbrowser": prodBrowser, "u3": prodOther,
	"miuibrowser": prodBrowser, "huaweibrowser": prodBrowser, "heytapbrowser": prodBrowser,
	"oppobrowser": prodBrowser, "vivobrowser": prodBrowser, "qqbrowser": prodBrowser,
	"mqqbrowser": prodBrowser, "quark": prodBrowser, "ddg": prodBrowser, "duckduckgo": prodBrowser,
	"focus": prodBrowser, "brave": prodBrowser, "whale": prodBrowser, "coc_coc_browser": prodBrowser,
	"silk": prodBrowser, "seamonkey": prodBrowser, "waterfox": prodBrowser, "librewolf": prodBrowser,
	"palemoon": prodBrowser, "mxios": prodBrowser, "oculusbrowser": prodBrowser,
	"avast": prodBrowser, "avg": prodBrowser, "puffin": prodBrowser, "maxthon": prodBrowser,
}
