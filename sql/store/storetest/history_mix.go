package storetest

import (
	"math/rand/v2"

	"github.com/viewcount/viewcount"
)

// The mixes History draws from. Shares are loosely those small blogs and
// video creators see; what matters for tests is that every dimension has
// a head, a tail and an unknown value.

// host is ref_host as the validator derives it: without "www.".
type referrer struct{ url, host, source string }

var referrers = []referrer{
	{"", "", "(direct)"},
	{"https://www.google.com/", "google.com", "Google"},
	{"https://www.google.de/", "google.de", "Google"},
	{"https://www.bing.com/", "bing.com", "Bing"},
	{"https://duckduckgo.com/", "duckduckgo.com", "DuckDuckGo"},
	{"https://www.reddit.com/r/programming/", "reddit.com", "Reddit"},
	{"https://old.reddit.com/r/golang/", "old.reddit.com", "Reddit"},
	{"https://news.ycombinator.com/item", "news.ycombinator.com", "Hacker News"},
	{"https://t.co/abc", "t.co", "X"},
	{"https://www.facebook.com/", "facebook.com", "Facebook"},
	{"https://www.linkedin.com/feed/", "linkedin.com", "LinkedIn"},
	{"https://chatgpt.com/", "chatgpt.com", "ChatGPT"},
	{"https://mail.google.com/", "mail.google.com", "Gmail"},
	{"https://weekly.golangnews.example/issue-42", "weekly.golangnews.example", "weekly.golangnews.example"},
	{"https://blog.alice.example/links", "blog.alice.example", "blog.alice.example"},
	{"https://bob.example/2026/11/reading", "bob.example", "bob.example"},
	{"https://lobste.rs/s/x", "lobste.rs", "lobste.rs"},
}

var referrerCum = cumulative(38, 20, 4, 3, 2, 5, 1, 5, 4, 3, 2, 2, 1, 3, 3, 2, 2)

type campaign struct{ utm viewcount.UTM }

// campaigns[0] is no campaign (most views).
var campaigns = []campaign{
	{},
	{viewcount.UTM{Source: "newsletter", Medium: "email", Campaign: "weekly-42"}},
	{viewcount.UTM{Source: "newsletter", Medium: "email", Campaign: "weekly-43"}},
	{viewcount.UTM{Source: "twitter", Medium: "social", Campaign: "launch"}},
	{viewcount.UTM{Source: "reddit", Medium: "social", Campaign: "launch"}},
	{viewcount.UTM{Source: "google", Medium: "cpc", Campaign: "spring-sale"}},
	{viewcount.UTM{Source: "youtube", Medium: "video", Campaign: ""}},
}

type client struct{ ua, browser, os, device string }

var clients = []client{
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", "Chrome", "Windows", "desktop"},
	{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Mobile Safari/537.36", "Chrome", "Android", "mobile"},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", "Safari", "iOS", "mobile"},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15", "Safari", "macOS", "desktop"},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", "Chrome", "macOS", "desktop"},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:145.0) Gecko/20100101 Firefox/145.0", "Firefox", "Windows", "desktop"},
	{"Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0", "Firefox", "Linux", "desktop"},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0", "Edge", "Windows", "desktop"},
	{"Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1", "Safari", "iOS", "tablet"},
	{"Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Mobile Safari/537.36", "Samsung Internet", "Android", "mobile"},
	{"Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36", "Chrome", "ChromeOS", "desktop"},
	{"Mozilla/5.0 (PlayStation 5 3.20) AppleWebKit/605.1.15 (KHTML, like Gecko)", "", "", "other"},
}

var clientCum = cumulative(26, 22, 16, 7, 6, 5, 3, 6, 3, 3, 2, 1)

// screenValues[0] is the pixel's (no hints).
var screenValues = []string{"", "mobile", "tablet", "laptop", "desktop"}

func screenFor(device string, rng *rand.Rand) int {
	switch device {
	case "mobile":
		return 1
	case "tablet":
		return 2
	case "desktop":
		if rng.IntN(2) == 0 {
			return 3
		}
		return 4
	}
	return 0
}

type country struct{ code string }

var countries = []country{
	{"US"}, {"DE"}, {"GB"}, {"IN"}, {"FR"}, {"CA"}, {"BR"}, {"JP"}, {"NL"}, {"AU"},
	{"ES"}, {"IT"}, {"PL"}, {"SE"}, {"CH"}, {"AT"}, {"MX"}, {"KR"}, {"NG"}, {""},
}

var countryCum = cumulative(30, 11, 8, 8, 5, 4, 4, 3, 3, 2, 2, 2, 2, 1.5, 1, 1, 1.5, 1, 0.5, 3)

type filterReason struct{ reason viewcount.Reason }

var filterReasons = []filterReason{
	{viewcount.BotUA}, {viewcount.Duplicate}, {viewcount.Rate}, {viewcount.Headless}, {viewcount.Datacenter},
	{viewcount.BadHints}, {viewcount.DuplicateID}, {viewcount.NetworkRotation}, {viewcount.BadReferrer}, {viewcount.EmptyUA},
}

var filterCum = cumulative(38, 24, 10, 8, 7, 4, 3, 3, 2, 1)
