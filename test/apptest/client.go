package apptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/viewcount/viewcount/cmd/vcdev/loadgen"
)

const (
	ChromeUA  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36"
	FirefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:145.0) Gecko/20100101 Firefox/145.0"
	SafariUA  = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
)

// VisitorIP gives visitor i its own address in its own /24 (and so its own
// visitor and network ids), as visitors of a site mostly are. The addresses
// only appear in X-Forwarded-For headers; nothing is sent to them.
func VisitorIP(i int) string { return fmt.Sprintf("203.%d.%d.9", i/250, i%250) }

// Client sends hits to one server.
type Client struct {
	T    *testing.T
	Base string
	HTTP *http.Client
}

// NewClient returns a client of the server listening on m's address (a
// Server, or an app.Main a test started itself).
func NewClient(t *testing.T, m interface{ Addr() string }) *Client {
	return &Client{T: t, Base: "http://" + m.Addr(), HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Do sends req and returns its status and body, failing the test when it
// gets no answer.
func (c *Client) Do(req *http.Request) (int, []byte) {
	c.T.Helper()
	// Hits go out as a browser sends them (the header_mismatch rule rejects
	// a browser UA without its headers), unless a test set its own.
	if p := req.URL.Path; (p == "/p.gif" || p == "/v1/events") && req.Header.Get("Accept-Language") == "" {
		loadgen.SetBrowserHeaders(req.Header, req.UserAgent(), req.Method == http.MethodPost)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// AddSite adds domain through the admin API and returns the site's token.
func (c *Client) AddSite(domain string) string {
	c.T.Helper()
	req, _ := http.NewRequest("POST", c.Base+"/v1/admin/sites", strings.NewReader(`{"domain":"`+domain+`"}`))
	req.Header.Set("Authorization", "Bearer "+AdminToken)
	req.Header.Set("Content-Type", "application/json")
	code, body := c.Do(req)
	if code != http.StatusCreated {
		c.T.Fatalf("add site: %d %s", code, body)
	}
	var out struct{ Site, Token string }
	if err := json.Unmarshal(body, &out); err != nil || out.Token == "" {
		c.T.Fatalf("add site body %s: %v", body, err)
	}
	return out.Token
}

// Hit is one view as a browser sends it: the pixel, or with Beacon vc.js's
// POST. IP goes out as X-Forwarded-For; an empty UA sends an empty
// User-Agent header.
type Hit struct {
	IP, UA, Site, Page, ID string
	Webdriver              bool
	Beacon                 bool
}

// Send sends h and returns the status of the answer.
func (c *Client) Send(h Hit) int {
	c.T.Helper()
	var req *http.Request
	if h.Beacon {
		// What vc.js reports from a real browser on a plain-HTTP page.
		hints := map[string]any{"sw": 1920, "sh": 1080, "lang": 2, "tz": true, "uad": false, "sec": false}
		ev := map[string]any{"site": h.Site, "page": h.Page, "webdriver": h.Webdriver, "hints": hints}
		if h.ID != "" {
			ev["id"] = h.ID
		}
		b, _ := json.Marshal(ev)
		req, _ = http.NewRequest("POST", c.Base+"/v1/events", bytes.NewReader(b))
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	} else {
		q := url.Values{"site": {h.Site}, "page": {h.Page}}
		if h.ID != "" {
			q.Set("id", h.ID)
		}
		req, _ = http.NewRequest("GET", c.Base+"/p.gif?"+q.Encode(), nil)
	}
	req.Header.Set("X-Forwarded-For", h.IP)
	if h.UA != "" {
		req.Header.Set("User-Agent", h.UA)
	} else {
		req.Header["User-Agent"] = []string{""}
	}
	code, _ := c.Do(req)
	return code
}

// CountBody is the public count's answer.
type CountBody struct {
	Site    string `json:"site"`
	Page    string `json:"page"`
	Views   uint64 `json:"views"`
	Uniques uint64 `json:"uniques"`
	AsOf    string `json:"as_of"`
	Pending uint64 `json:"pending"`
}

// Count reads the public count of page, with the answer's status and
// headers.
func (c *Client) Count(site, page string) (int, CountBody, http.Header) {
	c.T.Helper()
	req, _ := http.NewRequest("GET", c.Base+"/v1/sites/"+site+"/count?page="+url.QueryEscape(page), nil)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer resp.Body.Close()
	var out CountBody
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, resp.Header
}
