//go:build !race

package browser

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/store/storetest"
	"github.com/viewcount/viewcount/test/apptest"
)

const instagramUA = "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240805.005; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/128.0.6613.127 Mobile Safari/537.36 Instagram 346.0.0.34.91 Android (34/14; 420dpi; 1080x2205; Google/google; Pixel 8; shiba; shiba; en_US; 634262227)"

// Hostile user agents: each would become an element (and, without the
// page's CSP, run) if the page wrote it as markup.
var markupUAs = []string{
	`Mozilla/5.0 <img src=x onerror="window.__xss=1">`,
	`Mozilla/5.0 </script><script>window.__xss=2</script><b id="xss">bold</b>`,
}

// TestDashboardRejected: the filtered panel says who was filtered. An
// operator's over-broad --bot-list pattern rejects readers in the
// Instagram app as bot_ua (a false positive); the panel shows, under
// bot_ua, "Instagram · mobile" and the app's user agent with their count.
// A user agent holding markup is shown as its text, never as an element.
func TestDashboardRejected(t *testing.T) {
	b := newBrowser(t, 1400, 1000)
	bots := filepath.Join(t.TempDir(), "bots.txt")
	if err := os.WriteFile(bots, []byte("Instagram \\d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) {
		c.Validate.Rules.SettleWindow = -1 // counted at once: the test reads what the validators decided
		c.Validate.BotList = bots
	}, time.Now)
	c := apptest.NewClient(t, m)
	const site = "rejected.example"
	token := c.AddSite(site)

	// Readers in the app, through ingest and the validators, which reject
	// them and classify their browser.
	const live = 4
	for i := range live {
		if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(300 + i), UA: instagramUA, Site: site, Page: "/post"}); code != http.StatusOK {
			t.Fatalf("hit %d: status %d", i, code)
		}
	}
	if code := c.Send(apptest.Hit{IP: apptest.VisitorIP(400), UA: apptest.FirefoxUA, Site: site, Page: "/post"}); code != http.StatusOK {
		t.Fatalf("valid hit: status %d", code)
	}
	apptest.Eventually(t, 60*time.Second, func() string {
		if got := apptest.Reasons(t, m, site); len(got) != 2 || got["bot_ua"] != live || got["valid"] != 1 {
			return fmt.Sprintf("views_raw by verdict = %v, want bot_ua %d, valid 1", got, live)
		}
		return ""
	})
	// Many more of them earlier today, and the hostile agents as headless,
	// as stored verdicts (the store's real insert path; partition 4000 is
	// none the stream has).
	var rows []viewcount.Verdict
	add := func(ua string, reason viewcount.Reason, d viewcount.Dims, n int) {
		for range n {
			i := len(rows)
			rows = append(rows, viewcount.Verdict{
				Event: viewcount.Event{Time: time.Now().UTC().Add(-time.Minute - time.Duration(i)*time.Millisecond), Site: site,
					Page: "/post", UA: ua, ID: "rej" + strconv.Itoa(i), Visitor: uint64(9000 + i), Network: uint64(9000 + i), Source: viewcount.SourcePixel},
				Reason: reason, Partition: 4000, Seq: uint64(1 + i),
				Dims: d,
			})
		}
	}
	add(instagramUA, viewcount.BotUA, viewcount.Dims{Browser: "Instagram", OS: "Android", Device: "mobile"}, 2140-live)
	add(markupUAs[0], viewcount.Headless, viewcount.Dims{Device: "other"}, 3)
	add(markupUAs[1], viewcount.Headless, viewcount.Dims{Device: "other"}, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := storetest.InsertFed(ctx, m.Store, "dashboard-test-rejected", rows); err != nil {
		t.Fatalf("insert: %v", err)
	}

	b.do(t, "sign in",
		chromedp.Navigate("http://"+m.Addr()+"/dashboard/"+site),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("signin-submit")),
	)
	b.waitLoaded(t, "")
	// The reason with the most rejections is shown first.
	if got := evalJS[[]string](t, b, `Array.from(document.getElementById('rejected-reason').options).map(o => o.value + '=' + o.textContent)`); strings.Join(got, ";") != "bot_ua=bot_ua · 2,140;headless=headless · 5" {
		t.Errorf("reasons offered = %q, want bot_ua · 2,140 then headless · 5", got)
	}
	if got := evalJS[string](t, b, `document.getElementById('rejected-reason').value`); got != "bot_ua" {
		t.Errorf("reason shown %q, want bot_ua", got)
	}
	if got, want := tableRows(t, b, "#rejected-classes"), [][]string{{"Instagram · mobile", "2,140"}}; !equalRows(got, want) {
		t.Errorf("bot_ua classes = %q, want %q", got, want)
	}
	if got, want := tableRows(t, b, "#rejected-agents"), [][]string{{instagramUA, "Instagram · mobile", "2,140"}}; !equalRows(got, want) {
		t.Errorf("bot_ua user agents = %q, want %q", got, want)
	}

	b.screenshot(t, "dashboard-rejected.png")

	b.do(t, "pick headless", chromedp.SetValue(chromedp.ID("rejected-reason"), "headless"))
	evalJS[bool](t, b, `document.getElementById('rejected-reason').dispatchEvent(new Event('change'))`)
	want := [][]string{{markupUAs[0], "unknown browser · other", "3"}, {markupUAs[1], "unknown browser · other", "2"}}
	if got := tableRows(t, b, "#rejected-agents"); !equalRows(got, want) {
		t.Errorf("headless user agents = %q, want %q", got, want)
	}
	// Inert: the text is there, as text; no element came of it, nothing ran.
	inert := evalJS[[]string](t, b, `[
  String(document.querySelectorAll('#rejected-agents img, #rejected-agents script, #rejected-agents b, #xss').length),
  String(document.querySelectorAll('#rejected-agents td.v').length),
  String(Array.from(document.querySelectorAll('#rejected-agents td.v')).every(td => td.children.length === 1 && td.firstElementChild.tagName === 'SPAN' && td.firstElementChild.children.length === 0)),
  String(window.__xss),
]`)
	if strings.Join(inert, " ") != "0 2 true undefined" {
		t.Errorf("markup user agents: elements made of them, cells, cells text only, window.__xss = %q; want 0 2 true undefined", inert)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(errs, "\n"))
	}
}
