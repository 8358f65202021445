package judge

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/cespare/xxhash/v2"
	useragent "github.com/medama-io/go-useragent"
	"github.com/x-way/crawlerdetect"
)

// uaCacheSize bounds the memoized user-agent verdicts. Real traffic repeats
// a few hundred to a few thousand distinct UAs per hour, so this keeps the hit
// rate near 100% while holding at most ~8k strings (UAs are length-capped by
// ingest, so a few MiB at worst).
const uaCacheSize = 1 << 13

// uaMatcher decides whether a user agent is a bot, crawler, tool or headless
// browser, combining the built-in tokens, a positive model of browsers' user
// agents (browserModel, with the maintained in-app list) and Crawler-Detect's
// patterns. crawlerdetect (~1,400 patterns in one case-insensitive
// alternation) costs ~120 µs per UA, so it runs only for browser-shaped UAs
// holding a crawler's word, and each UA's verdict is memoized. The verdict
// is a pure function of the UA string and the configured patterns: the cache
// changes how fast an answer comes, never which, so it needs no reset on
// replay and its eviction order cannot affect determinism.
//
// With replace (Config.ReplaceBotList) the built-in tokens and Crawler-Detect
// are not consulted at all: only the configured patterns decide, so an
// operator can take over the whole list from a file without a rebuild.
//
// Beside the bot verdict the cache holds what else the rules need of a UA
// string (the engine it claims, a hash for the rotation sketches) and what
// the dashboard shows of it (browser, OS, device class), so each distinct
// UA is parsed and hashed once, not once per view.
//
// A uaMatcher is not safe for concurrent use; each Rules owns one.
type uaMatcher struct {
	extra     *regexp.Regexp // ExtraBotPatterns as one alternation; nil if none
	replace   bool           // only extra decides
	model     *browserModel
	parser    *useragent.Parser
	cur, prev map[string]uaInfo
}

// uaInfo is everything the rules and the dashboard dimensions derive from a
// user-agent string alone.
type uaInfo struct {
	// bot: the user agent alone is positive evidence of a non-person (a
	// crawler or tool signature, a contact URL or address, an HTTP
	// library, an automation framework, a token sequence no browser sends).
	bot bool
	// weak: the browser model does not recognise the user agent, and
	// nothing in it is evidence: one weak signal, which rejects a view only
	// with company from the request (headerMismatch).
	weak   bool
	family uaFamily
	major  int    // Chrome major version, for famChromium
	hash   uint64 // xxhash of the UA, for the rotation sketches
	dims   uaDims // browser, OS, device class
}

func newUAMatcher(patterns []string, replace bool) (*uaMatcher, error) {
	model, err := newBrowserModel(defaultInApp, "lists/inapp.txt")
	if err != nil {
		return nil, err // a bad embedded list is a build bug; TestDefaultInAppList guards it
	}
	m := &uaMatcher{replace: replace, model: model, parser: useragent.NewParser(), cur: make(map[string]uaInfo), prev: map[string]uaInfo{}}
	if len(patterns) == 0 {
		return m, nil
	}
	for i, p := range patterns {
		if _, err := compilePattern(p); err != nil {
			return nil, fmt.Errorf("validate: extra bot pattern %d %q: %w", i+1, p, err)
		}
	}
	re, err := regexp.Compile("(?i)(?:" + strings.Join(patterns, ")|(?:") + ")")
	if err != nil {
		return nil, fmt.Errorf("validate: extra bot patterns: %w", err)
	}
	m.extra = re
	return m, nil
}

func compilePattern(p string) (*regexp.Regexp, error) {
	if p == "" {
		return nil, fmt.Errorf("empty pattern matches every user agent")
	}
	return regexp.Compile("(?i)" + p)
}

// isBot reports whether ua (already known to be non-empty) is a bot.
func (m *uaMatcher) isBot(ua string) bool { return m.info(ua).bot }

// info returns the memoized facts about ua (already known to be non-empty).
func (m *uaMatcher) info(ua string) uaInfo {
	if v, ok := m.cur[ua]; ok {
		return v
	}
	v, ok := m.prev[ua]
	if !ok {
		var buf [512]byte
		low := appendLower(buf[:0], ua)
		v.bot, v.weak = m.classifyLow(ua, low, nil)
		v.family, v.major = browserFamily(low)
		v.hash = xxhash.Sum64String(ua)
		v.dims = parseUADims(m.parser, ua, low)
	}
	// Two generations: when the current map is full it becomes the previous
	// one, and UAs still in use are promoted on their next hit. Bounded, with
	// no per-entry bookkeeping on the hot path.
	if len(m.cur) >= uaCacheSize/2 {
		m.prev, m.cur = m.cur, make(map[string]uaInfo, uaCacheSize/2)
	}
	// Clone: ua may point into a large decode buffer the cache must not pin.
	m.cur[strings.Clone(ua)] = v
	return v
}

// classify is the uncached verdict: bot when the user agent alone is
// evidence, weak when it is only unrecognised.
func (m *uaMatcher) classify(ua string) (bot, weak bool) {
	var buf [512]byte
	return m.classifyLow(ua, appendLower(buf[:0], ua), nil)
}

// classifyLow is classify with ua already lowercased into low. The evidence
// model (docs/invalid-traffic.md):
//
//   - alone, a user agent rejects a view only on positive evidence that it
//     is not a person: a crawler, tool, HTTP library or automation name
//     (botTokens, the operator's patterns, Crawler-Detect's maintained list),
//     a contact URL or e-mail address (contact), or a token sequence no
//     browser sends (shapeImpossible);
//   - a user agent the browser model does not recognise (an unknown
//     product, a web view marker, an app token in brackets, an old
//     engine) is a weak signal only: weak, judged with the request
//     (headerMismatch);
//   - a recognised browser or in-app browser is a person's unless it holds
//     a word crawlers use (suspectTokens) and Crawler-Detect names it:
//     bots pose as browsers too.
//
// Crawler-Detect (~120 µs a UA, memoised) runs only for UAs holding such a
// word, whatever their shape, so a flood of random strings costs no more.
//
// why, when not nil, is set to the evidence for the answer (Explain); the
// judging path passes nil and pays nothing for it.
func (m *uaMatcher) classifyLow(ua string, low []byte, why *string) (bot, weak bool) {
	if m.replace {
		bot = m.extra != nil && m.extra.MatchString(ua)
		if why != nil {
			*why = "only --bot-list judges (--bot-list-replace): " + m.extraEvidence(ua)
		}
		return bot, false
	}
	if tok := botTokens.find(low); tok != nil {
		if why != nil {
			*why = fmt.Sprintf("names a crawler, tool or HTTP client: the built-in token %q", tok)
		}
		return true, false
	}
	if i := contact(low); i >= 0 {
		if why != nil {
			*why = fmt.Sprintf("signed with a contact, which no browser's user agent holds: %q", wordAt(ua, i))
		}
		return true, false
	}
	if bareClients[string(low)] {
		if why != nil {
			*why = fmt.Sprintf("a runtime's bare HTTP client: %q", ua)
		}
		return true, false
	}
	if p := prefixOf(low, clientPrefixes); p != nil {
		if why != nil {
			*why = fmt.Sprintf("starts as a runtime's HTTP client does: %q", p)
		}
		return true, false
	}
	if m.extra != nil && m.extra.MatchString(ua) {
		if why != nil {
			*why = m.extraEvidence(ua)
		}
		return true, false
	}
	shape := m.model.shape(ua, low)
	if shape == shapeImpossible {
		if why != nil {
			*why = "a sequence no browser sends: Chrome/ without AppleWebKit"
		}
		return true, false
	}
	suspect := suspectTokens.find(low)
	if (suspect != nil || shape == shapeNone && !bytes.HasPrefix(low, []byte("mozilla/"))) && crawlerdetect.IsCrawler(ua) {
		if why != nil {
			*why = fmt.Sprintf("Crawler-Detect's maintained list names it (its patterns match %q)", crawlerDetectMatch(ua))
		}
		return true, false
	}
	if why != nil {
		switch {
		case shape == shapeNone:
			*why = "the browser model does not recognise it: a weak signal, which rejects only with a request that is not a browser's (header_mismatch)"
		case suspect != nil:
			*why = fmt.Sprintf("a browser's user agent; it holds %q, a word crawlers use, but Crawler-Detect does not name it", suspect)
		default:
			*why = "a browser's user agent (the browser model recognises it)"
		}
	}
	return false, shape == shapeNone
}

// extraEvidence says what of ua the operator's --bot-list patterns match.
func (m *uaMatcher) extraEvidence(ua string) string {
	if m.extra == nil {
		return "no --bot-list patterns"
	}
	if s := m.extra.FindString(ua); s != "" || m.extra.MatchString(ua) {
		return fmt.Sprintf("a --bot-list pattern matches %q", s)
	}
	return "no --bot-list pattern matches"
}

// crawlerDetectMatch narrows ua to the shortest window Crawler-Detect still
// calls a crawler, to show an operator which words its patterns matched
// (the library reports only yes or no). Explain-only: it calls the
// library once per byte trimmed.
func crawlerDetectMatch(ua string) string {
	lo, hi := 0, len(ua)
	for hi > lo+1 && crawlerdetect.IsCrawler(ua[lo:hi-1]) {
		hi--
	}
	for lo < hi-1 && crawlerdetect.IsCrawler(ua[lo+1:hi]) {
		lo++
	}
	return ua[lo:hi]
}

// wordAt is the run of non-space bytes of s around byte i.
func wordAt(s string, i int) string {
	lo, hi := i, i
	for lo > 0 && s[lo-1] != ' ' && s[lo-1] != '(' && s[lo-1] != ';' {
		lo--
	}
	for hi < len(s) && s[hi] != ' ' && s[hi] != ')' && s[hi] != ';' {
		hi++
	}
	return s[lo:hi]
}

// bareClients are whole user agents that name a runtime's default client,
// too short to match as substrings.
var bareClients = map[string]bool{"node": true, "ruby": true, "python": true, "java": true, "perl": true, "go": true, "php": true, "deno": true, "bun": true, "undici": true}

// clientPrefixes start the user agents of runtimes' HTTP clients; only at
// the start (a Firefox extension appended "FirePHP/0.3" to browsers').
// "Java/" only there too: feature phones' browsers append "Java/HWJa/1.0
// Profile/MIDP-2.0", the JVM's own client starts with it.
var clientPrefixes = tokens("php/", "python/", "ruby/", "deno/", "bun/", "dart/", "perl/", "java/", "java ")

// prefixOf is the first of prefixes s starts with, or nil.
func prefixOf(s []byte, prefixes [][]byte) []byte {
	for _, p := range prefixes {
		if bytes.HasPrefix(s, p) {
			return p
		}
	}
	return nil
}

// contact finds a URL or an e-mail address in a lowercased user agent
// (where it is, or -1):
// how crawlers, feed readers, scanners and research bots sign theirs, and
// what no browser's user agent holds. The word "http" alone is not one: a
// TV's browser lists HAS_CMD_HTTP_SERVER among its features, and the HTTP
// libraries that name themselves so are botTokens.
func contact(low []byte) int {
	if i := bytes.Index(low, []byte("://")); i >= 0 {
		return i
	}
	if i := bytes.Index(low, []byte("www.")); i >= 0 {
		return i
	}
	// name@host.tld: a word before the '@', a dotted host after it (not
	// "android@84.0", Ecosia's version tag).
	for i := bytes.IndexByte(low, '@'); i >= 0; {
		if i > 0 && isMailByte(low[i-1]) && mailHost(low[i+1:]) {
			return i
		}
		j := bytes.IndexByte(low[i+1:], '@')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return -1
}

func isMailByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == '+'
}

// mailHost reports whether s starts with a host name of at least two
// labels whose last is letters only ("example.org").
func mailHost(s []byte) bool {
	end := 0
	for end < len(s) && ('a' <= s[end] && s[end] <= 'z' || '0' <= s[end] && s[end] <= '9' || s[end] == '.' || s[end] == '-') {
		end++
	}
	host := bytes.Trim(s[:end], ".")
	dot := bytes.LastIndexByte(host, '.')
	if dot <= 0 || dot == len(host)-1 {
		return false
	}
	for _, c := range host[dot+1:] {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return len(host)-dot-1 >= 2
}

// nextProduct splits the next product token ("name/version") off a
// lowercased UA after its platform comment, skipping spaces and WebKit's
// "(KHTML, like Gecko)", the only other comment browsers send. tok is nil
// at the end; a tok holding '(' or ')' is a comment glued to a product.
func nextProduct(rest []byte) (tok, after []byte) {
	for {
		rest = bytes.TrimLeft(rest, " ")
		if len(rest) == 0 {
			return nil, nil
		}
		r, ok := bytes.CutPrefix(rest, []byte("(khtml, like gecko)"))
		if !ok {
			break
		}
		rest = r
	}
	if j := bytes.IndexByte(rest, ' '); j >= 0 {
		return rest[:j], rest[j:]
	}
	return rest, nil
}

// botTokens are lowercase substrings that on their own mark a bot, whatever
// else the UA says. They cover what matters most for page-view counts and
// what Crawler-Detect misses or matches only through generic words: AI
// crawlers and AI assistants fetching on a user's behalf, HTTP libraries,
// automation and headless browsers, uptime monitors, link previewers.
var botTokens = newTokenSet(
	// search and SEO crawlers
	"googlebot", "google-inspectiontool", "googleother", "bingbot", "yandexbot",
	"baiduspider", "duckduckbot", "applebot", "ahrefsbot", "semrushbot",
	"mj12bot", "dotbot", "petalbot", "seznambot",
	// AI crawlers and fetchers
	"gptbot", "chatgpt-user", "oai-searchbot", "claudebot", "claude-user",
	"claude-searchbot", "claude-web", "anthropic-ai", "ccbot", "perplexitybot",
	"perplexity-user", "bytespider", "amazonbot", "meta-externalagent",
	"meta-externalfetcher", "google-cloudvertexbot", "cohere-ai", "diffbot",
	"youbot", "timpibot", "imagesiftbot", "mistralai-user", "duckassistbot",
	"ai2bot", "omgilibot",
	// HTTP libraries, runtimes and command-line tools
	"curl/", "wget/", "python-requests", "python-urllib", "python-httpx",
	"aiohttp", "go-http-client", "okhttp", "apache-httpclient",
	"node-fetch", "axios/", "undici", "libwww-perl", "httpie", "guzzlehttp",
	"scrapy", "postmanruntime", "http.rb", "dart:io", "reqwest/", "faraday v",
	"restsharp/", "microsoft-cryptoapi", "winhttp", "libcurl", "cpp-httplib", "powershell/",
	// webhooks
	"github-hookshot", "shopify-captain-hook", "stripe/",
	// automation and headless browsers
	"headlesschrome", "headless", "phantomjs", "slimerjs", "puppeteer",
	"playwright", "selenium", "webdriver",
	// uptime and performance monitors
	"uptimerobot", "pingdom", "statuscake", "site24x7", "newrelicpinger",
	"datadog", "checkly", "betteruptime", "uptime-kuma", "gtmetrix",
	"chrome-lighthouse", "pagespeed", "freshping", "updown.io",
	// link previewers
	"facebookexternalhit", "facebookcatalog", "slackbot", "slack-imgproxy",
	"twitterbot", "linkedinbot", "discordbot", "telegrambot", "whatsapp/",
	"skypeuripreview", "embedly", "pinterestbot", "redditbot", "iframely",
	"bitlybot", "vkshare", "mastodon/",
)

// suspectTokens are generic words that crawlers use but that do not prove a
// bot on their own ("bot" is also in phone model names Crawler-Detect
// excludes); a browser-shaped UA containing one goes to crawlerdetect.
// TestFastPathMissesNoCrawler checks this list against Crawler-Detect's own
// crawler corpus: no UA on it may pass on its shape alone.
var suspectTokens = newTokenSet(
	"bot", "crawl", "spider", "slurp", "http", "www.", ".com", ".net", ".org",
	"fetch", "preview", "scan", "check", "monitor", "archive", "scrap",
	"proxy", "valid", "feed", "reader", "extract", "analy", "cron", "search",
	"agent", "client", "index", "tool", "test", "capture", "render", "screenshot",
	"lighthouse", "google", "yahoo", "yandex", "baidu", "bing", "link", "iplabel",
	"neustar", "datanyze", "seo", "site", "cloud", "+", "@", "download", "mail", "insights",
)

func tokens(s ...string) [][]byte {
	b := make([][]byte, len(s))
	for i := range s {
		b[i] = []byte(s[i])
	}
	return b
}

// appendLower appends s lowercased (ASCII only; other bytes are kept) to dst.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// LoadPatterns reads a bot pattern list: one case-insensitive regular
// expression per line (a plain substring is one, but escape metacharacters
// such as '.' and '+'), lines starting with '#' are comments, blank lines and
// surrounding spaces are ignored. The error for a bad pattern names the file
// and line.
func LoadPatterns(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("validate: bot patterns: %w", err)
	}
	defer f.Close()
	var patterns []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		p := strings.TrimSpace(sc.Text())
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		if _, err := compilePattern(p); err != nil {
			return nil, fmt.Errorf("validate: bot patterns: %s:%d: %q: %w", path, line, p, err)
		}
		patterns = append(patterns, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("validate: bot patterns: %s: %w", path, err)
	}
	return patterns, nil
}
