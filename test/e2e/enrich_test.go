package e2e

import (
	"context"
	"fmt"
	"github.com/viewcount/viewcount/cmd/viewcount/app"
	"github.com/viewcount/viewcount/sql/queries"
	"github.com/viewcount/viewcount/sql/store"
	"github.com/viewcount/viewcount/test/apptest"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestEnrichedViews sends a pixel hit and beacon hits with UTM tags, known
// referrers, real browser user agents and a CDN country header through a
// whole serve (the default country database included), and reads the
// exact dimensions back from views_raw.
func TestEnrichedViews(t *testing.T) {
	m := apptest.StartWith(t, t.TempDir(), apptest.NewDB(), func(c *app.Config) { c.Ingest.CountryHeader = "CF-IPCountry"; c.Ingest.ASNDB = "" }, time.Now)
	c := apptest.NewClient(t, m)
	const site = "enrich.example"
	c.AddSite(site)
	send := func(req *http.Request, ip, ua, country string, want int) {
		t.Helper()
		req.Header.Set("X-Forwarded-For", ip)
		req.Header.Set("User-Agent", ua)
		if country != "" {
			req.Header.Set("CF-IPCountry", country)
		}
		if code, body := c.Do(req); code != want {
			t.Fatalf("%s %s: %d %s", req.Method, req.URL, code, body)
		}
	}
	beacon := func(body string) *http.Request {
		req, _ := http.NewRequest("POST", c.Base+"/v1/events", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		return req
	}
	const (
		iPhoneUA  = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.0 Mobile/15E148 Safari/604.1"
		tabletUA  = "Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36"
		hintsJSON = `"hints":{"sw":%d,"sh":900,"lang":2,"tz":true,"uad":true,"sec":true}`
	)
	// The pixel: tags in the page's query, a Google referrer, the CDN says "de".
	q := url.Values{"site": {site}, "page": {"/landing/?utm_source=Newsletter&utm_medium=Email&utm_campaign=Spring+Sale"},
		"ref": {"https://www.google.co.uk/search?q=viewcount"}}
	send(&http.Request{Method: "GET", URL: mustURL(t, c.Base+"/p.gif?"+q.Encode()), Header: http.Header{}}, "203.0.113.10", iPhoneUA, "de", http.StatusOK)
	// The beacon from desktop Chrome, referred by t.co; no header: the
	// country database knows 8.8.8.8.
	send(beacon(`{"site":"`+site+`","page":"/post?utm_source=Twitter&utm_campaign=launch","referrer":"https://t.co/xyz",`+
		fmt.Sprintf(hintsJSON, 1920)+`}`), "8.8.8.8", apptest.ChromeUA, "", http.StatusAccepted)
	// An Android tablet moving within the site: an internal referrer is no
	// source. The CDN says Tor ("T1": unknown) and the database knows no
	// private address: no country. (Only a header: nothing is sent there.)
	send(beacon(`{"site":"`+site+`","page":"/post2","referrer":"https://www.enrich.example/landing",`+
		fmt.Sprintf(hintsJSON, 800)+`}`), "10.0.0.11", tabletUA, "T1", http.StatusAccepted)
	// A bot still gets its dimensions (and its verdict).
	send(beacon(`{"site":"`+site+`","page":"/zbot","referrer":"https://news.ycombinator.com/item?id=1",`+
		fmt.Sprintf(hintsJSON, 1366)+`}`), "203.0.113.12", "curl/8.5.0", "US", http.StatusAccepted)

	// A browser on an AWS address: the default AS-number data and hosting
	// list make it datacenter traffic, and the row keeps AS16509.
	send(beacon(`{"site":"`+site+`","page":"/zdc",`+fmt.Sprintf(hintsJSON, 1920)+`}`), "52.94.236.248", apptest.ChromeUA, "", http.StatusAccepted)

	want := strings.Join([]string{
		"/landing|newsletter|email|spring sale|DE|google.co.uk|Google|Safari|iOS|mobile||valid",
		"/post|twitter||launch|US|t.co|X|Chrome|Windows|desktop|desktop|valid",
		"/post2||||||(direct)|Chrome|Android|tablet|tablet|valid",
		"/zbot||||US|news.ycombinator.com|Hacker News|||other|laptop|bot_ua",
		"/zdc||||US||(direct)|Chrome|Windows|desktop|desktop|datacenter",
	}, "\n")
	var got string
	apptest.Eventually(t, 30*time.Second, func() string {
		res, err := m.Store.Query(context.Background(), queries.Text("raw_dims"), store.Params{"site": site})
		if err != nil {
			return err.Error()
		}
		var rows []string
		for _, r := range res.TextRows() {
			rows = append(rows, strings.Join(r, "|"))
		}
		got = strings.Join(rows, "\n")
		if len(rows) < 5 {
			return fmt.Sprintf("%d rows so far", len(rows))
		}
		return ""
	})
	if got != want {
		t.Fatalf("views_raw dimensions:\n got\n%s\nwant\n%s", got, want)
	}
	// The AS numbers stored: Google's public DNS (not a hosting network:
	// Google's main AS also carries people's traffic), AWS, none for the
	// private address.
	res, err := m.Store.Query(context.Background(), queries.Text("raw_signals"), store.Params{"site": site})
	if err != nil {
		t.Fatal(err)
	}
	var asns []string
	for _, r := range res.TextRows() { // page, browser, req_flags, asn, verdict
		asns = append(asns, r[0]+"="+r[3])
	}
	if got, want := strings.Join(asns, " "), "/landing=0 /post=15169 /post2=0 /zbot=0 /zdc=16509"; got != want {
		t.Errorf("AS numbers %s, want %s", got, want)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
