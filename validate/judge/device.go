package judge

import (
	"bytes"
	"strings"

	useragent "github.com/medama-io/go-useragent"
	"github.com/medama-io/go-useragent/agents"
)

// Device classes, the values of viewcount.Dims.Device.
const (
	DeviceDesktop = "desktop"
	DeviceMobile  = "mobile"
	DeviceTablet  = "tablet"
	DeviceOther   = "other" // TVs, consoles, bots, empty or unparsable user agents
)

// uaDims is what the dashboard shows of a user agent.
type uaDims struct {
	browser, os, device string
}

// parseUADims derives browser, OS and device class from a user agent with
// medama-io/go-useragent (a trie built once per process, ~0.5-1 µs a parse,
// no allocation), corrected where its answer is not what a dashboard
// should show. low is ua lowercased (ASCII). Every string returned is a
// constant, so the memo holding it pins no request memory.
func parseUADims(p *useragent.Parser, ua string, low []byte) uaDims {
	if ua == "" {
		return uaDims{device: DeviceOther}
	}
	a := p.Parse(ua)
	d := uaDims{browser: browserName(a.Browser()), os: osName(a.OS()), device: DeviceOther}
	switch a.Device() {
	case agents.DeviceDesktop:
		d.device = DeviceDesktop
	case agents.DeviceMobile:
		d.device = DeviceMobile
		// Android tablets send no "Mobile" token (Google's guidance to
		// tablet browsers); the parser files them as phones.
		if a.OS() == agents.OSAndroid && !bytes.Contains(low, []byte("mobile")) {
			d.device = DeviceTablet
		}
	case agents.DeviceTablet:
		d.device = DeviceTablet
	}
	// In-app browsers name their app after the engine's tokens; the parser
	// reports the engine (Safari, Chrome). Readers arriving from a link in
	// the app are better shown as the app, as Plausible and Umami do.
	for _, app := range inAppBrowsers {
		if bytes.Contains(low, app.token) {
			d.browser = app.name
			break
		}
	}
	return d
}

// inAppBrowsers: the token an app's embedded browser adds, lowercased, and
// the name shown. Messenger's and the Facebook app's "FBAN/FBAV" tokens both
// show as Facebook.
var inAppBrowsers = []struct {
	token []byte
	name  string
}{
	{[]byte("instagram"), "Instagram"},
	{[]byte("fban/"), "Facebook"},
	{[]byte("fbav/"), "Facebook"},
	{[]byte("fb_iab/"), "Facebook"},
	{[]byte("bytedancewebview"), "TikTok"},
	{[]byte("musical_ly"), "TikTok"},
	{[]byte("linkedinapp"), "LinkedIn"},
	{[]byte("snapchat"), "Snapchat"},
	{[]byte("pinterest/"), "Pinterest"},
}

// browserName is the parser's name, with the products' own spellings
// where they differ; "" when unknown.
func browserName(b agents.Browser) string {
	switch b {
	case agents.BrowserSamsung:
		return "Samsung Internet"
	}
	return string(b)
}

func osName(o agents.OS) string {
	switch o {
	case agents.OSMacOS:
		return "macOS"
	}
	return string(o)
}

// screenClass is the screen width's class as Plausible groups it: under
// 576 CSS pixels a phone, under 992 a tablet, under 1440 a laptop, else a
// desktop. "" without hints (the pixel) or a width of 0.
func screenClass(w uint16) string {
	switch {
	case w == 0:
		return ""
	case w < 576:
		return "mobile"
	case w < 992:
		return "tablet"
	case w < 1440:
		return "laptop"
	}
	return "desktop"
}

// hostOf is the host of a referrer as ingest stores it ("scheme://host/path";
// a bare "host/path" is accepted too): no userinfo, port or trailing dot.
// Lowercase in, so no allocation, for what ingest sends.
func hostOf(referrer string) string {
	host := referrer
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if i := strings.LastIndexByte(host, '@'); i >= 0 { // user:pass@host
		host = host[i+1:]
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") { // a port
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	if hasUpper(host) {
		host = strings.ToLower(host)
	}
	return host
}
