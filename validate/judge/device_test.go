package judge

import (
	"strconv"
	"testing"

	useragent "github.com/medama-io/go-useragent"
)

// Real user agents as browsers sent them in 2025-2026 (ua_test.go has
// more, for the bot rules).
var (
	uaChromeWin142 = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	uaChromeOS     = "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
	uaAndroidTab   = "Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
	uaInstaIOS     = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 385.0.0.21.88 (iPhone15,3; iOS 18_5; en_US; en; scale=3.00; 1290x2796; 758384530)"
	uaInstaAnd     = "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/128.0.6613.127 Mobile Safari/537.36 Instagram 346.0.0.34.91 Android (34/14; 420dpi; 1080x2205; Google/google; Pixel 8; shiba; shiba; en_US; 634262227)"
	uaFBIOS        = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/520.0.0.38.101;FBBV/745282118;FBDV/iPhone15,3;FBMD/iPhone;FBSN/iOS;FBSV/18.5;FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/80]"
	uaFBAndroid    = "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/128.0.6613.127 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/480.0.0.58.83;]"
	uaSmartTV      = "Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/4.0 Chrome/76.0.3809.146 TV Safari/537.36"
)

func TestParseUADims(t *testing.T) {
	p := useragent.NewParser()
	f := func(ua, browser, os, device string) {
		t.Helper()
		var buf [512]byte
		got := parseUADims(p, ua, appendLower(buf[:0], ua))
		if want := (uaDims{browser, os, device}); got != want {
			t.Errorf("%.70s…\n got %+v\nwant %+v", ua, got, want)
		}
	}
	f(uaChromeWin142, "Chrome", "Windows", DeviceDesktop)
	f(uaChromeWin, "Chrome", "Windows", DeviceDesktop)
	f(uaChromeMac, "Chrome", "macOS", DeviceDesktop)
	f(uaChromeLinux, "Chrome", "Linux", DeviceDesktop)
	f(uaFirefoxWin, "Firefox", "Windows", DeviceDesktop)
	f(uaFirefoxLinux, "Firefox", "Linux", DeviceDesktop)
	f(uaFirefoxMac, "Firefox", "macOS", DeviceDesktop)
	f(uaSafariMac, "Safari", "macOS", DeviceDesktop)
	f(uaEdgeWin, "Edge", "Windows", DeviceDesktop)
	f(uaOpera, "Opera", "Windows", DeviceDesktop)
	f(uaChromeOS, "Chrome", "ChromeOS", DeviceDesktop)
	f(uaSafariIPhone, "Safari", "iOS", DeviceMobile)
	f(uaChromeIOS, "Chrome", "iOS", DeviceMobile)
	f(uaChromeAndroid, "Chrome", "Android", DeviceMobile)
	f(uaFirefoxAndroid, "Firefox", "Android", DeviceMobile)
	f(uaEdgeAndroid, "Edge", "Android", DeviceMobile)
	f(uaSafariIPad, "Safari", "iOS", DeviceTablet)
	f(uaAndroidTab, "Chrome", "Android", DeviceTablet) // no "Mobile" token: a tablet
	f(uaSamsung, "Samsung Internet", "Android", DeviceMobile)
	f(uaInstaIOS, "Instagram", "iOS", DeviceMobile)
	f(uaInstaAnd, "Instagram", "Android", DeviceMobile)
	f(uaFBIOS, "Facebook", "iOS", DeviceMobile)
	f(uaFBAndroid, "Facebook", "Android", DeviceMobile)
	// Bots are BotUA anyway; their device is "other" whatever they imitate.
	f(uaGooglebot, "Chrome", "Android", DeviceOther)
	f("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "", "", DeviceOther)
	f("curl/8.5.0", "", "", DeviceOther)
	f("", "", "", DeviceOther)
	f(uaSmartTV, "Samsung Internet", "Linux", DeviceOther)
}

func TestScreenClass(t *testing.T) {
	for w, want := range map[uint16]string{
		0: "", 1: "mobile", 390: "mobile", 575: "mobile", 576: "tablet", 820: "tablet", 991: "tablet",
		992: "laptop", 1366: "laptop", 1439: "laptop", 1440: "desktop", 1920: "desktop", 65535: "desktop",
	} {
		if got := screenClass(w); got != want {
			t.Errorf("screenClass(%d) = %q, want %q", w, got, want)
		}
	}
}

// BenchmarkParseUA is the parse a distinct user agent costs once (then it
// is memoised): medama's trie and the corrections, on a mix of browsers.
// Compare BenchmarkUAMatcher/miss (the bot check of a distinct UA) and
// /hit (any repeat, which includes these dimensions).
func BenchmarkParseUA(b *testing.B) {
	p := useragent.NewParser()
	uas := []string{uaChromeWin, uaSafariIPhone, uaChromeAndroid, uaSafariMac, uaFirefoxLinux, uaEdgeWin, uaSamsung, uaInstaIOS}
	lows := make([][]byte, len(uas))
	for i, ua := range uas {
		lows[i] = appendLower(nil, ua)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = parseUADims(p, uas[i%len(uas)], lows[i%len(uas)])
		i++
	}
}

// BenchmarkUAInfo is the user-agent memo as the rules use it: "memoised" is
// every repeat of a UA (bot verdict, engine, hash and dimensions in one map
// lookup); "distinct" is a UA seen for the first time (the browser-shaped
// bot check, the hash and the parse, then the insert).
func BenchmarkUAInfo(b *testing.B) {
	m, err := newUAMatcher(nil, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("memoised", func(b *testing.B) {
		uas := []string{uaChromeWin, uaSafariIPhone, uaChromeAndroid, uaSafariMac}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			_ = m.info(uas[i%len(uas)])
			i++
		}
	})
	b.Run("distinct", func(b *testing.B) {
		uas := make([]string, 1<<16)
		for i := range uas {
			uas[i] = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0." + strconv.Itoa(i) + ".0 Safari/537.36"
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			m.cur, m.prev = map[string]uaInfo{}, map[string]uaInfo{} // every lookup a miss
			_ = m.info(uas[i%len(uas)])
			i++
		}
	})
}
