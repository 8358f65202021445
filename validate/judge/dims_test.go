package judge

import (
	"testing"
	"time"

	"github.com/viewcount/viewcount"
)

// TestJudgeDims: every verdict, valid or not, carries its dimensions, and
// they are what Dims gives on its own.
func TestJudgeDims(t *testing.T) {
	r := newTestRules(t, Config{})
	hints := viewcount.Hints{Present: true, ScreenW: 390, ScreenH: 844, Languages: 2, TZ: true, Secure: true}
	f := func(e viewcount.Event, reason viewcount.Reason, want viewcount.Dims) {
		t.Helper()
		gotReason, got := r.JudgeDims(&e)
		if gotReason != reason || got != want {
			t.Errorf("%s %.40s…\n got %s %+v\nwant %s %+v", e.Page, e.UA, gotReason, got, reason, want)
		}
		if d := r.Dims(&e); d != want {
			t.Errorf("Dims %+v, JudgeDims %+v", d, want)
		}
	}
	base := viewcount.Event{Time: t0, Site: "example.com", Page: "/a", UA: uaSafariIPhone, Visitor: 1, Source: viewcount.SourceBeacon, Hints: hints,
		Referrer: "https://www.google.de/"}
	f(base, viewcount.Valid, viewcount.Dims{RefHost: "google.de", RefSource: "Google", Browser: "Safari", OS: "iOS", Device: "mobile", Screen: "mobile"})

	e := base
	e.Page, e.Referrer, e.Visitor = "/b", "https://www.example.com/a", 2 // internal: no source
	f(e, viewcount.Valid, viewcount.Dims{RefSource: "(direct)", Browser: "Safari", OS: "iOS", Device: "mobile", Screen: "mobile"})

	e = base
	e.Page, e.UA, e.Source, e.Hints, e.Referrer, e.Visitor = "/c", uaChromeWin, viewcount.SourcePixel, viewcount.Hints{}, "", 3 // the pixel: no screen
	f(e, viewcount.Valid, viewcount.Dims{RefSource: "(direct)", Browser: "Chrome", OS: "Windows", Device: "desktop"})

	e = base
	e.Page, e.UA, e.Visitor = "/d", "curl/8.5.0", 4
	f(e, viewcount.BotUA, viewcount.Dims{RefHost: "google.de", RefSource: "Google", Device: "other", Screen: "mobile"})

	e = base
	e.Page, e.UA, e.Visitor = "/e", " ", 5
	f(e, viewcount.EmptyUA, viewcount.Dims{RefHost: "google.de", RefSource: "Google", Device: "other", Screen: "mobile"})

	e = base
	e.Page, e.Site, e.Referrer, e.Visitor = "/f", "unknown.example", "https://news.ycombinator.com/item?id=1", 6
	f(e, viewcount.UnknownSite, viewcount.Dims{RefHost: "news.ycombinator.com", RefSource: "Hacker News", Browser: "Safari", OS: "iOS", Device: "mobile", Screen: "mobile"})

	e = base
	e.Page, e.Hints.ScreenW, e.Hints.ScreenH, e.UA, e.Visitor = "/g", 2560, 1440, uaSafariMac, 7
	f(e, viewcount.Valid, viewcount.Dims{RefHost: "google.de", RefSource: "Google", Browser: "Safari", OS: "macOS", Device: "desktop", Screen: "desktop"})
}

// BenchmarkJudgeDims is BenchmarkValidate's mix through JudgeDims: the
// rules plus the dimensions, per event (the difference is the dimensions'
// cost on memoised user agents and referrers).
func BenchmarkJudgeDims(b *testing.B) {
	evs := stream(1<<18, 26*time.Hour, 100_000, 3)
	refs := []string{"", "https://www.google.com/", "https://t.co/x", "https://news.ycombinator.com/item", "https://blog.example.net/post"}
	for i := range evs {
		evs[i].Referrer = refs[i%len(refs)]
	}
	r := newTestRules(b, Config{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(evs) {
			i = 0
			r.Reset()
		}
		_, _ = r.JudgeDims(&evs[i])
		i++
	}
}
