package loadgen

import (
	"fmt"
	"math/rand/v2"
)

// engine is the browser engine behind a user agent: it decides which hints
// a real browser reports (navigator.userAgentData exists only in Chromium).
type engine uint8

const (
	chromium engine = iota
	gecko
	webkit
)

type device uint8

const (
	desktop device = iota
	mobile
)

// browser is one kind of real browser with its share of page views
// (roughly StatCounter's 2025 global shares) and current user-agent strings.
type browser struct {
	name   string
	weight int
	engine engine
	device device
	uas    []string
}

// browsers are real user-agent strings of current releases. Chromium
// browsers send the reduced UA (minor versions zeroed, Android model "K");
// iOS 26 froze the OS version in the UA at 18_6.
var browsers = []browser{
	{"chrome-windows", 30, chromium, desktop, []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 Safari/537.36",
	}},
	{"chrome-android", 22, chromium, mobile, []string{
		"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36",
	}},
	{"safari-ios", 18, webkit, mobile, []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Mobile/15E148 Safari/604.1",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.6 Mobile/15E148 Safari/604.1",
	}},
	{"chrome-mac", 7, chromium, desktop, []string{
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/143.0.0.0 Safari/537.36",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36",
	}},
	{"edge-windows", 6, chromium, desktop, []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/141.0.0.0 Safari/537.36 Edg/141.0.0.0",
	}},
	{"safari-mac", 5, webkit, desktop, []string{
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.1 Safari/605.1.15",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.6 Safari/605.1.15",
	}},
	{"firefox-windows", 3, gecko, desktop, []string{
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:144.0) Gecko/20100101 Firefox/144.0",
	}},
	{"samsung-android", 3, chromium, mobile, []string{
		"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/29.0 Chrome/136.0.0.0 Mobile Safari/537.36",
		"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/28.0 Chrome/130.0.0.0 Mobile Safari/537.36",
	}},
	{"chrome-ios", 2, webkit, mobile, []string{
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/142.0.7444.148 Mobile/15E148 Safari/604.1",
	}},
	{"firefox-mac", 1, gecko, desktop, []string{
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:145.0) Gecko/20100101 Firefox/145.0",
	}},
	{"chrome-linux", 1, chromium, desktop, []string{
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36",
	}},
	{"firefox-linux", 1, gecko, desktop, []string{
		"Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0",
	}},
	{"firefox-android", 1, gecko, mobile, []string{
		"Mozilla/5.0 (Android 15; Mobile; rv:145.0) Gecko/145.0 Firefox/145.0",
	}},
}

var browserWeightSum = func() int {
	n := 0
	for _, b := range browsers {
		n += b.weight
	}
	return n
}()

// chromeIndex is the index of desktop Chrome on Windows in browsers: the UA
// that headless and bad-hints clients claim.
const chromeIndex = 0

func pickBrowser(rng *rand.Rand) *browser {
	n := rng.IntN(browserWeightSum)
	for i := range browsers {
		if n -= browsers[i].weight; n < 0 {
			return &browsers[i]
		}
	}
	return &browsers[0]
}

// Common screen sizes in CSS pixels, most frequent first.
var (
	desktopScreens = [][2]uint16{{1920, 1080}, {1536, 864}, {1366, 768}, {1440, 900}, {2560, 1440}, {1280, 720}, {1512, 982}, {1680, 1050}}
	mobileScreens  = [][2]uint16{{390, 844}, {393, 873}, {412, 915}, {360, 800}, {414, 896}, {430, 932}, {384, 854}, {375, 812}}
)

// realHints are the hints a real browser of kind b reports: consistent with
// its engine (only Chromium has navigator.userAgentData, and only in a secure
// context) and its device.
func realHints(rng *rand.Rand, b *browser) *Hints {
	screens := desktopScreens
	if b.device == mobile {
		screens = mobileScreens
	}
	// Earlier sizes are more common: take the smaller of two draws.
	s := screens[min(rng.IntN(len(screens)), rng.IntN(len(screens)))]
	secure := rng.IntN(100) != 0 // a few sites are still served over http
	return &Hints{
		ScreenW:   int64(s[0]),
		ScreenH:   int64(s[1]),
		Languages: int64(1 + min(rng.IntN(4), rng.IntN(4))),
		TZ:        true,
		UAData:    b.engine == chromium && secure,
		Secure:    secure,
	}
}

// badHints are hints no real Chrome reports (nil: none at all, as from a
// script posting the JSON itself).
func badHints(rng *rand.Rand) *Hints {
	h := &Hints{ScreenW: 1920, ScreenH: 1080, Languages: 2, TZ: true, UAData: true, Secure: true}
	switch rng.IntN(4) {
	case 0:
		return nil
	case 1:
		h.UAData = false // Chrome in a secure context always has userAgentData
	case 2:
		h.ScreenW, h.ScreenH = 0, 0
	default:
		h.Languages = 0
	}
	return h
}

// bots are user agents of crawlers, AI scrapers, monitors, link expanders,
// HTTP libraries and headless browsers, as they send them.
var bots = []string{
	"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
	"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.7444.59 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
	"CCBot/2.0 (https://commoncrawl.org/faq/)",
	"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)",
	"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)",
	"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
	"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
	"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
	"Mozilla/5.0 (compatible; Applebot/0.1; +http://www.apple.com/go/applebot)",
	"DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)",
	"Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
	"meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)",
	"curl/8.5.0",
	"Wget/1.21.4",
	"python-requests/2.32.3",
	"Python/3.12 aiohttp/3.10.5",
	"Go-http-client/1.1",
	"Go-http-client/2.0",
	"okhttp/4.12.0",
	"axios/1.7.7",
	"node-fetch/1.0 (+https://github.com/bitinn/node-fetch)",
	"Apache-HttpClient/4.5.14 (Java/17.0.9)",
	"Scrapy/2.11.2 (+https://scrapy.org)",
	"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/142.0.0.0 Safari/537.36",
	"Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1",
	"Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
	"Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)",
	"facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
	"Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)",
	"Twitterbot/1.0",
	"Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
	"WhatsApp/2.23.20.0",
	"TelegramBot (like TwitterBot)",
}

// Android models and OS versions for farm user agents.
var androidModels = []string{"SM-S918B", "SM-A546B", "SM-G991B", "Pixel 8", "Pixel 7a", "Redmi Note 12", "CPH2581", "moto g54 5G", "V2250", "RMX3771", "2201117TY", "SM-A155F"}

// farmUA is the i-th of many distinct, realistic-looking browser user agents
// (old-style full Chrome versions, Firefox releases, Android models), as a
// click farm rotates through. It is unique for i < maxFarmHits; the browser
// says which engine and device it claims.
const maxFarmHits = 4 * 500

func farmUA(i int) (string, *browser) {
	v := i / 4 % 500 // version slot, 500 per family
	switch i % 4 {
	case 0:
		major := 110 + v%34
		return fmt.Sprintf("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.%d.%d Safari/537.36",
			major, 5000+major*20+v/34, 40+v/34), &browsers[chromeIndex]
	case 1:
		major := 110 + v%34
		return fmt.Sprintf("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.%d.%d Safari/537.36",
			major, 5000+major*20+v/34, 60+v/34), &browsers[3]
	case 2:
		major := 110 + v%34
		model := androidModels[v/34%len(androidModels)]
		return fmt.Sprintf("Mozilla/5.0 (Linux; Android %d; %s) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/%d.0.%d.%d Mobile Safari/537.36",
			11+v%4, model, major, 5000+major*20+v/34, 80+v/(34*len(androidModels))), &browsers[1]
	default:
		ver := 100 + v%46
		os := []string{"Windows NT 10.0; Win64; x64", "Macintosh; Intel Mac OS X 10.15", "X11; Linux x86_64", "Windows NT 6.1; Win64; x64"}[v/46%4]
		return fmt.Sprintf("Mozilla/5.0 (%s; rv:%d.0) Gecko/20100101 Firefox/%d.%d", os, ver, ver, v/184), &browsers[6]
	}
}
