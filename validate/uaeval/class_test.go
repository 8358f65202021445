package uaeval

import "testing"

func TestClass(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (Web0S; Linux/SmartTV) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/94.0.4606.128 Safari/537.36 WebAppManager":                                 ClassTV,
		"Mozilla/5.0 (Nintendo Switch; WifiWebAuthApplet) AppleWebKit/606.4 (KHTML, like Gecko) NF/6.0.1.15.4 NintendoBrowser/5.1.0.20393":                           ClassConsole,
		"Mozilla/5.0 (X11; U; Linux armv7l like Android; en-us) AppleWebKit/531.2+ (KHTML, like Gecko) Version/5.0 Safari/533.2+ Kindle/3.0+":                        ClassEReader,
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 KAKAOTALK 10.7.5":                             ClassInApp,
		"Mozilla/5.0 (Linux; Android 14; Pixel 8; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.6478.134 Mobile Safari/537.36":                 ClassWebView,
		"Mozilla/5.0 (Linux; arm_64; Android 13; SM-A525F) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 YaBrowser/24.4.3.93.00 SA/3 Mobile Safari/537.36": ClassRegional,
		"Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1":                             ClassTablet,
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0":                                                                           ClassDesktop,
		"Nokia6300/2.0 (05.00) Profile/MIDP-2.0 Configuration/CLDC-1.1":                                                                                              ClassMobile,
		// The app's own client, not its in-app browser.
		"WhatsApp/2.11.112 Android/4.2.1 Device/asus-ASUS_Transformer_Pad_TF300TG": ClassApp,
		"Outlook-iOS/665.29827.prod.iphone (2.63.0)":                               ClassApp,
		"BaconReader/3.3.1(Android 4.4.2; LGE Nexus 4)":                            ClassApp,
	} {
		if got := Class(ua); got != want {
			t.Errorf("Class(%q) = %q, want %q", ua, got, want)
		}
	}
}
