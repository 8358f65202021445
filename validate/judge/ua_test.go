package judge

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/x-way/crawlerdetect"

	"github.com/viewcount/viewcount"
)

// Real user agents, current as of 2025.
var (
	uaChromeWin      = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	uaChromeMac      = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	uaChromeLinux    = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	uaChromeAndroid  = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36"
	uaChromeIOS      = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1"
	uaFirefoxWin     = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"
	uaFirefoxMac     = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0"
	uaFirefoxLinux   = "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	uaFirefoxAndroid = "Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0"
	uaSafariMac      = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"
	uaSafariIPhone   = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
	uaSafariIPad     = "Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
	uaEdgeWin        = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70"
	uaEdgeAndroid    = "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 EdgA/131.0.2903.87"
	uaSamsung        = "Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36"
	uaOpera          = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0"
	uaGooglebot      = "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
)

// sitesOf is a SiteLookup over a fixed set, registered since before any
// view.
type sitesOf map[string]bool

func (s sitesOf) Registered(site string) (time.Time, bool) { return time.Time{}, s[site] }

func newTestRules(t testing.TB, cfg Config) *Rules {
	t.Helper()
	r, err := NewRules(cfg, sitesOf{"example.com": true, "other.org": true})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestJudgeUserAgents(t *testing.T) {
	r := newTestRules(t, Config{})
	var visitor uint64
	base := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	f := func(ua string, want viewcount.Reason) {
		t.Helper()
		visitor++ // a new visitor each time: only the user agent decides
		e := viewcount.Event{Time: base, Site: "example.com", Page: "/", UA: ua, Visitor: visitor}
		if got := r.Judge(&e); got != want {
			t.Errorf("Judge(UA %q) = %s, want %s", ua, got, want)
		}
		if got := r.Judge(&e); got != want && want != viewcount.Valid { // memoized
			t.Errorf("Judge(UA %q) again = %s, want %s", ua, got, want)
		}
	}
	// Browsers, desktop and mobile.
	f(uaChromeWin, viewcount.Valid)
	f(uaChromeMac, viewcount.Valid)
	f(uaChromeLinux, viewcount.Valid)
	f(uaChromeAndroid, viewcount.Valid)
	f(uaChromeIOS, viewcount.Valid)
	f(uaFirefoxWin, viewcount.Valid)
	f(uaFirefoxMac, viewcount.Valid)
	f(uaFirefoxLinux, viewcount.Valid)
	f(uaFirefoxAndroid, viewcount.Valid)
	f(uaSafariMac, viewcount.Valid)
	f(uaSafariIPhone, viewcount.Valid)
	f(uaSafariIPad, viewcount.Valid)
	f(uaEdgeWin, viewcount.Valid)
	f(uaEdgeAndroid, viewcount.Valid)
	f(uaSamsung, viewcount.Valid)
	f(uaOpera, viewcount.Valid)
	// In-app browsers are people too.
	f("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/474.0.0.34.109;FBBV/636315041;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]", viewcount.Valid)
	f("Mozilla/5.0 (Linux; Android 13; SM-A536B Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36 Instagram 357.0.0.25.101 Android", viewcount.Valid)

	// Search and SEO crawlers.
	f(uaGooglebot, viewcount.BotUA)
	f("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", viewcount.BotUA)
	f("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36", viewcount.BotUA)
	f("Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", viewcount.BotUA)
	f("Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", viewcount.BotUA)
	f("Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", viewcount.BotUA)
	// AI crawlers and assistants.
	f("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)", viewcount.BotUA)
	f("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", viewcount.BotUA)
	f("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", viewcount.BotUA)
	f("CCBot/2.0 (https://commoncrawl.org/faq/)", viewcount.BotUA)
	f("Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", viewcount.BotUA)
	f("Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", viewcount.BotUA)
	f("Mozilla/5.0 (iPhone; CPU iPhone OS 8_1 like Mac OS X) AppleWebKit/600.1.4 (KHTML, like Gecko) Version/8.0 Mobile/12B410 Safari/600.1.4 (Applebot/0.1; +http://www.apple.com/go/applebot)", viewcount.BotUA)
	f("meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", viewcount.BotUA)
	f("Mozilla/5.0 (compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36", viewcount.BotUA)
	// HTTP libraries and tools.
	f("curl/8.5.0", viewcount.BotUA)
	f("Wget/1.21.4", viewcount.BotUA)
	f("python-requests/2.32.3", viewcount.BotUA)
	f("Python-urllib/3.12", viewcount.BotUA)
	f("Go-http-client/1.1", viewcount.BotUA)
	f("Go-http-client/2.0", viewcount.BotUA)
	f("okhttp/4.12.0", viewcount.BotUA)
	f("axios/1.7.7", viewcount.BotUA)
	f("node-fetch/1.0 (+https://github.com/bitinn/node-fetch)", viewcount.BotUA)
	f("Java/17.0.2", viewcount.BotUA)
	f("Apache-HttpClient/4.5.14 (Java/17.0.9)", viewcount.BotUA)
	f("PostmanRuntime/7.42.0", viewcount.BotUA)
	// Headless and automated browsers.
	f("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.85 Safari/537.36", viewcount.BotUA)
	f("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36", viewcount.BotUA)
	f("Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1", viewcount.BotUA)
	f("Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36 Chrome-Lighthouse", viewcount.BotUA)
	// Monitors.
	f("Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)", viewcount.BotUA)
	f("Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)", viewcount.BotUA)
	f("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 DatadogSynthetics", viewcount.BotUA)
	// Link previewers.
	f("facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", viewcount.BotUA)
	f("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", viewcount.BotUA)
	f("Slackbot 1.0 (+https://api.slack.com/robots)", viewcount.BotUA)
	f("Twitterbot/1.0", viewcount.BotUA)
	f("Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)", viewcount.BotUA)
	f("LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)", viewcount.BotUA)
	f("TelegramBot (like TwitterBot)", viewcount.BotUA)
	f("WhatsApp/2.23.20.0 A", viewcount.BotUA)
	// Nothing at all.
	f("", viewcount.EmptyUA)
	f("   ", viewcount.EmptyUA)
}

func TestExtraBotPatterns(t *testing.T) {
	r := newTestRules(t, Config{ExtraBotPatterns: []string{`acme-scanner`, `^Mozilla/5\.0 \(X11; Linux x86_64\).*Chrome/99\.`}})
	f := func(ua string, want bool) {
		t.Helper()
		if got := r.ua.isBot(ua); got != want {
			t.Errorf("isBot(%q) = %v, want %v", ua, got, want)
		}
	}
	f("ACME-Scanner/1.0", true)
	f("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/99.0.4844.51 Safari/537.36", true)
	f(uaChromeLinux, false)
	f(uaFirefoxWin, false)

	_, err := NewRules(Config{ExtraBotPatterns: []string{"ok", "bad(["}}, sitesOf{})
	if err == nil || !strings.Contains(err.Error(), "pattern 2") {
		t.Errorf("bad pattern: err = %v, want one naming pattern 2", err)
	}
	if _, err := NewRules(Config{ExtraBotPatterns: []string{""}}, sitesOf{}); err == nil {
		t.Error("empty pattern: no error")
	}
}

func TestLoadPatterns(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "bots.txt")
	os.WriteFile(good, []byte("# house bots\n\nacme-scanner\n  internal-probe/\\d+  \n# end\n"), 0o644)
	got, err := LoadPatterns(good)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"acme-scanner", `internal-probe/\d+`}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("LoadPatterns = %q, want %q", got, want)
	}

	bad := filepath.Join(dir, "bad.txt")
	os.WriteFile(bad, []byte("# c\nfine\n\nbroken(\n"), 0o644)
	_, err = LoadPatterns(bad)
	if err == nil || !strings.Contains(err.Error(), "bad.txt:4:") {
		t.Errorf("LoadPatterns(bad) err = %v, want one naming line 4", err)
	}
	if _, err := LoadPatterns(filepath.Join(dir, "missing.txt")); err == nil {
		t.Error("missing file: no error")
	}
}

func TestUACacheBounded(t *testing.T) {
	m, _ := newUAMatcher(nil, false)
	for i := range 3 * uaCacheSize {
		m.isBot("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0." + strconv.Itoa(i) + " Safari/537.36")
		if n := len(m.cur) + len(m.prev); n > uaCacheSize {
			t.Fatalf("after %d UAs the cache holds %d, cap %d", i+1, n, uaCacheSize)
		}
	}
}

// crawlerdetectCorpus returns the path of a file in crawlerdetect's testdata,
// or skips when the module source is not on disk.
func crawlerdetectCorpus(t *testing.T, name string) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/x-way/crawlerdetect").Output()
	if err != nil {
		t.Skipf("crawlerdetect module not found: %v", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "testdata", name)
	if _, err := os.Stat(path); err != nil {
		t.Skip(err)
	}
	return path
}

func eachLine(t *testing.T, path string, fn func(string)) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fn(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestFastPathMissesNoCrawler runs Crawler-Detect's own crawler corpus
// (3,600+ UAs) through the matcher: none may pass as a recognised browser,
// so the browser shortcut costs no accuracy. Each is a bot on its user
// agent alone, or at least unrecognised (weak: rejected with a request
// that is not a browser's, as a crawler's is).
func TestFastPathMissesNoCrawler(t *testing.T) {
	path := crawlerdetectCorpus(t, "crawlers.txt")
	m, _ := newUAMatcher(nil, false)
	n, weakOnly := 0, 0
	eachLine(t, path, func(ua string) {
		if strings.TrimSpace(ua) == "" {
			return
		}
		n++
		bot, weak := m.classify(ua)
		if !bot && !weak {
			t.Errorf("crawler classified as a browser: %q", ua)
		}
		if !bot {
			weakOnly++
		}
	})
	t.Logf("%d crawler UAs checked, %d of them only unrecognised (weak)", n, weakOnly)
}

// TestBuiltinTokensSpareDevices checks that the user agent alone rejects
// no real device: a sample of Crawler-Detect's device corpus (every 20th of
// 165k UAs) must all be judged human on the user agent, as crawlerdetect
// judges them. The strings the browser model does not recognise (765 of
// the 8,281 sampled: Internet Explorer 6-10 and Firefox 3 era strings,
// feature phones, old UC Browser and LinkedIn app versions, Dalvik and
// CFNetwork app clients, "61", "default", "w3m/0.5.3") are only weak: they
// count with a browser's request. The counts are exact for crawlerdetect
// v0.2.24's corpus.
func TestBuiltinTokensSpareDevices(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 24 MB corpus")
	}
	path := crawlerdetectCorpus(t, "devices.txt")
	m, _ := newUAMatcher(nil, false)
	// wantSigned: the devices whose user agent holds a URL, an address or
	// an HTTP tool's name, which are positive evidence (docs/invalid-traffic.md, the
	// evidence model): browsers of 2008-2011 that signed theirs (K-Meleon,
	// QtWeb, an Internet Explorer control), PowerShell's web client (twice),
	// a tester's string. The price of the rule, counted exactly. (The PS
	// Vita's system HTTP client, "libhttp", names no tool we know: it is
	// only weak.)
	const wantShaped, wantUnshaped, wantSigned = 7510, 765, 6
	i, n, fast, shape, signed := 0, 0, 0, 0, 0
	eachLine(t, path, func(ua string) {
		i++
		if i%20 != 0 || strings.TrimSpace(ua) == "" || crawlerdetect.IsCrawler(ua) {
			return
		}
		var buf [512]byte
		low := appendLower(buf[:0], ua)
		bot, weak := m.classify(ua)
		if bot && (contact(low) >= 0 || botTokens.in(low)) {
			signed++
			t.Logf("signed: %q", ua)
			return
		}
		if bot {
			t.Errorf("device classified as a bot on its user agent alone: %q", ua)
		}
		if m.model.shape(ua, low) == shapeNone {
			shape++
			if !weak {
				t.Errorf("not a browser's shape, yet not even a weak signal: %q", ua)
			}
			return
		}
		n++
		if !suspectTokens.in(low) {
			fast++
		}
	})
	t.Logf("%d browser-shaped device UAs checked, %d (%.0f%%) decided without crawlerdetect; %d not browser-shaped",
		n, fast, 100*float64(fast)/float64(max(n, 1)), shape)
	if n != wantShaped || shape != wantUnshaped || signed != wantSigned {
		t.Errorf("%d device UAs browser-shaped, %d not, %d signed; want %d, %d and %d (update them with the corpus or the model, after reading the strings)",
			n, shape, signed, wantShaped, wantUnshaped, wantSigned)
	}
}

// TestBrowsersTakeShortcut: current browsers must be decided without the
// ~120 µs crawlerdetect regexp, or a cold cache (a new browser release, a
// restart) costs that much per distinct UA.
func TestBrowsersTakeShortcut(t *testing.T) {
	m, _ := newUAMatcher(nil, false)
	f := func(ua string) {
		t.Helper()
		var buf [512]byte
		low := appendLower(buf[:0], ua)
		if m.model.shape(ua, low) == shapeNone || suspectTokens.in(low) {
			t.Errorf("browser misses the shortcut: %q", ua)
		}
	}
	for _, ua := range []string{uaChromeWin, uaChromeMac, uaChromeLinux, uaChromeAndroid, uaChromeIOS,
		uaFirefoxWin, uaFirefoxMac, uaFirefoxLinux, uaFirefoxAndroid, uaSafariMac, uaSafariIPhone,
		uaSafariIPad, uaEdgeWin, uaEdgeAndroid, uaSamsung, uaOpera} {
		f(ua)
	}
}

// TestNotBrowserShaped: strings with a URL are rejected; strings without a
// space or a slash (what zgo.at/isbot's shape rules caught before the
// browser model) are only unrecognised, judged with their request
// (TestJudgeBrowserModel); browsers and in-app browsers are left alone.
func TestNotBrowserShaped(t *testing.T) {
	r := newTestRules(t, Config{})
	var visitor uint64
	f := func(ua string, want viewcount.Reason) {
		t.Helper()
		visitor++
		e := viewcount.Event{Time: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC), Site: "example.com", Page: "/", UA: ua, Visitor: visitor, Network: visitor}
		if got := r.Judge(&e); got != want {
			t.Errorf("Judge(UA %q) = %s, want %s", ua, got, want)
		}
	}
	f("Viber", viewcount.Valid)                                                            // no slash: unrecognised, no request examined
	f("NextCloud-News/1.0", viewcount.Valid)                                               // no space: the same
	f("Feedbin feed-id:1 - 3 subscribers", viewcount.BotUA)                                // Crawler-Detect names it
	f("Mozilla/5.0 (compatible; SomeReader/2.1; https://reader.example)", viewcount.BotUA) // a URL
	f(uaChromeWin, viewcount.Valid)
	f("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/470.0.0.38.109;FBBV/614545312;FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/17.5;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]", viewcount.Valid)
	f("Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/125.0.6422.165 Mobile Safari/537.36 Instagram 334.0.0.42.95 Android (34/14; 480dpi; 1080x2340; samsung; SM-S918B; dm3q; qcom; en_US; 606382405)", viewcount.Valid)
	f("Mozilla/5.0 (Linux; Android 7.0; M bot 54 Build/NRD90M) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/58.0.3029.83 Mobile Safari/537.36", viewcount.Valid) // a phone named "bot"
}
