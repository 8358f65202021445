package uaeval

import (
	"regexp"
	"strings"
)

// Device classes an evaluation reports a set of people by. The classifier
// is the evaluation's own, on purpose apart from the validator's lists
// (lists/inapp.txt, the dashboard's device dimension), so a list's gaps
// show here instead of being hidden by the same list. Evaluation-only: no
// verdict depends on it.
const (
	ClassTV       = "tv"
	ClassConsole  = "console"
	ClassEReader  = "e-reader"
	ClassVR       = "vr"
	ClassWatch    = "watch"
	ClassApp      = "app client"
	ClassInApp    = "in-app"
	ClassWebView  = "web view"
	ClassRegional = "regional browser"
	ClassTablet   = "tablet"
	ClassMobile   = "mobile"
	ClassDesktop  = "desktop"
	ClassOther    = "other"
)

// classes are tried in order; the first whose pattern matches the
// lowercased user agent names its class.
var classes = []struct {
	name string
	re   *regexp.Regexp
}{
	{ClassTV, regexp.MustCompile(`smart-?tv|smarttv|hbbtv|netcast|web0s|webos.*tv|tizen.*tv|bravia|roku|crkey|googletv|android tv|appletv|apple tv|aft[a-z]{1,4}[ )]|philipstv|viera|aquos|inettvbrowser|opera tv|vidaa|hisense|dtv|\btv\b`)},
	{ClassConsole, regexp.MustCompile(`playstation|xbox|nintendo|\bwii\b|psp|ps vita|steamdeck|steam deck|ouya`)},
	{ClassEReader, regexp.MustCompile(`kindle|silk-accelerated|kobo|nook|tolino|pocketbook|boox|remarkable`)},
	{ClassVR, regexp.MustCompile(`oculus|quest|pico|vive|\bvr\b|visionos|meta quest`)},
	{ClassWatch, regexp.MustCompile(`watchos|\bwatch\b|wear os|wearable`)},
	{ClassInApp, regexp.MustCompile(`fban|fbav|fb_iab|instagram|micromessenger|\bline/|kakaotalk|naver\(|whale/.*naver|pinterest|snapchat|twitter|linkedinapp|telegram|tiktok|musical_ly|bytedance|gsa/|dingtalk|alipay|aliapp|weibo|qq/|baiduboxapp|zhihu|reddit|discord|slack|teams/|electron/|airwatch|outlook|yammer|viber|whatsapp`)},
	{ClassWebView, regexp.MustCompile(`; wv\)|webview|\(khtml, like gecko\) mobile/[0-9a-z]+$|\(khtml, like gecko\)$`)},
	{ClassRegional, regexp.MustCompile(`yabrowser|ucbrowser|ucweb|miuibrowser|huaweibrowser|samsungbrowser|qqbrowser|sogou|baidubrowser|bidubrowser|360se|360ee|quark|whale|coc_coc|vivobrowser|heytap|oppobrowser|opera mini|opera mobi|puffin|maxthon|seznam|lbbrowser|2345explorer|liebao|metasr|yandex|cheetah|phoenix`)},
	{ClassTablet, regexp.MustCompile(`ipad|tablet|\btab\b|sm-t[0-9]|kf[a-z]{2,4} build|nexus (7|9|10)\b|xoom|playbook|mipad`)},
	{ClassMobile, regexp.MustCompile(`iphone|ipod|mobile|android|phone|symbian|blackberry|bb10|nokia|windows ce|palm|kaios|j2me|midp|opera mini|up\.browser|netfront|obigo|series ?60|s60|samsung|sonyericsson|lg-|htc|mot-|sie-|fennec`)},
	{ClassDesktop, regexp.MustCompile(`windows|macintosh|mac os x|x11|linux|cros|freebsd|openbsd|sunos|beos|os/2|haiku`)},
}

// browserish is what every browser's user agent holds, a phone's built-in
// browser's included: a layout engine or a browser's name.
var browserish = regexp.MustCompile(`^mozilla/|^opera|applewebkit|gecko|khtml|presto|trident|browser|midp|netfront|obigo|ucweb|opera mini|blackberry`)

// Class is the device class of a user agent, for reports. An app's own
// HTTP client (WhatsApp fetching a link preview, a mail app, an SDK: no
// engine, no browser's name) is "app client", apart from the in-app
// browsers that show pages to people, though data sets file both under the
// device that sent them.
func Class(ua string) string {
	low := strings.ToLower(ua)
	for _, c := range classes {
		if c.name == ClassInApp && !browserish.MatchString(low) {
			return ClassApp
		}
		if c.re.MatchString(low) {
			return c.name
		}
	}
	if !browserish.MatchString(low) {
		return ClassApp
	}
	return ClassOther
}
