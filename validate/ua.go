package validate

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
	bot    bool
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
		v.bot = m.classifyLow(ua, low)
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

// classify is the uncached verdict. Order matters only for speed; any
// positive check makes the UA a bot.
func (m *uaMatcher) classify(ua string) bool {
	var buf [512]byte
	return m.classifyLow(ua, appendLower(buf[:0], ua))
}

// classifyLow is classify with ua already lowercased into low. A UA the
// browser model (uamodel.go) does not recognise as a browser's is a bot:
// the model says what browsers look like, so it also rejects bots no list
// names yet (issue 11). A browser-shaped UA is a person unless it holds a
// word crawlers use (suspectTokens), which sends it to Crawler-Detect's
// patterns: bots also pose as browsers.
func (m *uaMatcher) classifyLow(ua string, low []byte) bool {
	if m.replace {
		return m.extra != nil && m.extra.MatchString(ua)
	}
	if containsAny(low, botTokens) {
		return true
	}
	if m.extra != nil && m.extra.MatchString(ua) {
		return true
	}
	if m.model.shape(ua, low) == shapeNone {
		return true
	}
	return containsAny(low, suspectTokens) && crawlerdetect.IsCrawler(ua)
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
var botTokens = tokens(
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
	// HTTP libraries and command-line tools
	"curl/", "wget/", "python-requests", "python-urllib", "python-httpx",
	"aiohttp", "go-http-client", "okhttp", "java/", "apache-httpclient",
	"node-fetch", "axios/", "undici", "libwww-perl", "httpie", "guzzlehttp",
	"scrapy", "postmanruntime", "http.rb",
	// automation and headless browsers
	"headlesschrome", "headless", "phantomjs", "slimerjs", "puppeteer",
	"playwright", "selenium", "webdriver",
	// uptime and performance monitors
	"uptimerobot", "pingdom", "statuscake", "site24x7", "newrelicpinger",
	"datadog", "checkly", "betteruptime", "uptime-kuma", "gtmetrix",
	"chrome-lighthouse", "pagespeed",
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
var suspectTokens = tokens(
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

func containsAny(s []byte, subs [][]byte) bool {
	for _, sub := range subs {
		if bytes.Contains(s, sub) {
			return true
		}
	}
	return false
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
