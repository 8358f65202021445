package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"text/tabwriter"

	"github.com/viewcount/viewcount"
	"github.com/viewcount/viewcount/api"
	"github.com/viewcount/viewcount/ingest"
	"github.com/viewcount/viewcount/validate"
	"github.com/viewcount/viewcount/validate/judge"
)

// explainer is the api's Explainer: the rules in force now (the flags'
// configuration and the corrections in the store), the sites' registry,
// and for a sample request ingest's own handling of it.
type explainer struct {
	m     *Main
	icfg  ingest.Config
	salts ingest.SaltSource
}

// storedAnswer is GET /v1/admin/explain's answer.
type storedAnswer struct {
	Events []validate.StoredExplanation `json:"events"`
}

// sampleAnswer is POST /v1/admin/explain's answer: what ingest answered
// the request and, for each event it made, every rule's decision.
type sampleAnswer struct {
	Status int                 `json:"status"`
	Error  string              `json:"error,omitempty"`
	Events []judge.Explanation `json:"events"`
}

func (x explainer) rules(ctx context.Context) (*judge.Rules, error) {
	cfg, err := x.m.ruleConfig()
	if err != nil {
		return nil, err
	}
	if cfg, _, err = validate.WithCorrections(ctx, x.m.store, cfg); err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	return judge.NewRules(cfg, x.m.sites)
}

func (x explainer) ExplainEvent(ctx context.Context, site, id string) (any, error) {
	r, err := x.rules(ctx)
	if err != nil {
		return nil, err
	}
	evs, err := validate.ExplainStored(ctx, x.m.store, r, site, id)
	if err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, fmt.Errorf("%w: no event %q of site %q in views_raw (is the id the one the tracker sent, and the site its domain?)", api.ErrNotFound, id, site)
	}
	return storedAnswer{Events: evs}, nil
}

// maxSampleHeaders bounds a sample's headers: a browser sends about 20.
const maxSampleHeaders = 64

func (x explainer) ExplainSample(ctx context.Context, req api.SampleRequest) (any, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", api.ErrRevalidateRequest, fmt.Sprintf(format, a...))
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.ParseRequestURI(req.URL)
	switch {
	case err != nil || u.Host != "" || u.Scheme != "":
		return nil, bad("url: want a path and query on this server, e.g. /p.gif?site=example.com&page=/ or /v1/events")
	case method == http.MethodGet && u.Path == "/p.gif", method == http.MethodPost && u.Path == "/v1/events":
	default:
		return nil, bad("method and url: GET /p.gif?… (the pixel) or POST /v1/events (the beacon), got %s %s", method, u.Path)
	}
	if len(req.Headers) > maxSampleHeaders {
		return nil, bad("headers: at most %d", maxSampleHeaders)
	}
	if len(req.Body) > ingest.MaxBodyBytes {
		return nil, bad("body: at most %d bytes", ingest.MaxBodyBytes)
	}
	var ip netip.Addr
	if req.IP != "" {
		if ip, err = netip.ParseAddr(req.IP); err != nil {
			return nil, bad("ip: %v", err)
		}
	}
	hr, err := http.NewRequestWithContext(ctx, method, u.RequestURI(), bytes.NewReader([]byte(req.Body)))
	if err != nil {
		return nil, bad("%v", err)
	}
	hr.Host = "sample.invalid"
	for k, v := range req.Headers {
		if !validHeader(k, v) {
			return nil, bad("headers: %q: a token name and a value of printable characters", k)
		}
		if strings.EqualFold(k, "Host") {
			hr.Host = v
			continue
		}
		hr.Header.Set(k, v)
	}
	r, err := x.rules(ctx)
	if err != nil {
		return nil, err
	}
	s := ingest.SampleRequest(x.icfg, x.salts, hr, ip, x.m.logger, x.m.now)
	ans := sampleAnswer{Status: s.Status, Error: s.Error, Events: make([]judge.Explanation, len(s.Events))}
	for i := range s.Events {
		ans.Events[i] = r.Explain(&s.Events[i])
	}
	return ans, nil
}

// validHeader allows what net/http would send: a token for a name, and a
// value without control characters (tab aside).
func validHeader(name, value string) bool {
	if name == "" || len(name) > 256 || len(value) > 8<<10 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// newExplainer is the api's explainer for m, taking samples as the
// ingest configured by icfg would.
func newExplainer(ctx context.Context, m *Main, icfg ingest.Config) (explainer, error) {
	kv, err := m.stream.KV(ctx, viewcount.BucketSalts)
	if err != nil {
		return explainer{}, err
	}
	return explainer{m: m, icfg: icfg, salts: ingest.NewSalts(kv, rand.Reader, m.logger)}, nil
}

const explainUsage = `usage:
  viewcount explain --site S --id ID [--json]
      every rule's decision on the site's stored event ID (the id the tracker sent,
      views_raw.event_id), with its evidence, the stored verdict and what views_raw
      holds of the views before it for the rules that depend on them
  viewcount explain --site S [--page P] [--ua UA] [-H 'Name: value']… [--ip ADDR] [--beacon] [--json]
  viewcount explain --url '/p.gif?site=S&page=P' [--ua UA] [-H …]… [--ip ADDR] [--json]
      the same for a request nobody sent: a pixel hit (or with --beacon a beacon
      POST of {"site":S,"page":P}) with those headers from ADDR, taken as ingest
      would take it; nothing is stored
common flags: [--server URL] [--admin-token-file FILE] [--data DIR]; the admin token: VIEWCOUNT_ADMIN_TOKEN, the file, else DIR/admin_token`

// headerFlags is a repeatable -H 'Name: value'.
type headerFlags map[string]string

func (h headerFlags) String() string { return "" }

func (h headerFlags) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	if !ok || strings.TrimSpace(name) == "" {
		return errors.New(`want "Name: value"`)
	}
	h[strings.TrimSpace(name)] = strings.TrimSpace(value)
	return nil
}

// runExplain implements `viewcount explain` against a running server's
// admin API.
func runExplain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("viewcount explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, explainUsage) }
	af := adminFlags(fs)
	site := fs.String("site", "", "the site")
	id := fs.String("id", "", "a stored event's id")
	page := fs.String("page", "/", "sample: the page")
	rawURL := fs.String("url", "", "sample: the pixel URL, path and query (instead of --site and --page)")
	ua := fs.String("ua", "", "sample: the User-Agent")
	ip := fs.String("ip", "", "sample: the client's address")
	beacon := fs.Bool("beacon", false, "sample: a beacon POST rather than a pixel hit")
	headers := headerFlags{}
	fs.Var(headers, "H", "sample: a request header 'Name: value' (repeatable)")
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || *site == "" && *rawURL == "" || *id != "" && *site == "" {
		return errors.New(explainUsage)
	}
	admin, err := af.client("/v1/admin/explain", stderr)
	if err != nil {
		return err
	}
	if *id != "" {
		var ans storedAnswer
		if err := fetchJSON(admin, http.MethodGet, "?"+url.Values{"site": {*site}, "id": {*id}}.Encode(), nil, &ans); err != nil {
			return err
		}
		if *jsonOut {
			return printJSON(stdout, ans)
		}
		for i, e := range ans.Events {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "event %s of %s at %s: %s%s\n", e.Event.ID, e.Event.Site, e.Event.Time.Format("2006-01-02T15:04:05.000Z07:00"), e.Event.Page, orEmpty(" from "+e.Event.Referrer, e.Event.Referrer))
			fmt.Fprintf(stdout, "user agent: %s\n", e.Event.UA)
			fmt.Fprintf(stdout, "stored verdict: %s (rules %s); the rules in force (%s) say: %s\n", e.Stored, e.StoredRules, e.Rules, e.Verdict)
			if err := printSteps(stdout, e.Explanation); err != nil {
				return err
			}
		}
		return nil
	}
	req := api.SampleRequest{URL: *rawURL, Headers: headers, IP: *ip}
	if *ua != "" {
		req.Headers["User-Agent"] = *ua
	}
	switch {
	case *beacon:
		body, _ := json.Marshal(map[string]string{"site": *site, "page": *page})
		req.Method, req.URL, req.Body = http.MethodPost, "/v1/events", string(body)
		if _, ok := req.Headers["Content-Type"]; !ok {
			req.Headers["Content-Type"] = "text/plain;charset=UTF-8"
		}
	case req.URL == "":
		req.URL = "/p.gif?" + url.Values{"site": {*site}, "page": {*page}}.Encode()
	}
	body, _ := json.Marshal(req)
	var ans sampleAnswer
	if err := fetchJSON(admin, http.MethodPost, "", body, &ans); err != nil {
		return err
	}
	if *jsonOut {
		return printJSON(stdout, ans)
	}
	fmt.Fprintf(stdout, "ingest answered %d%s\n", ans.Status, orEmpty(": "+ans.Error, ans.Error))
	for _, e := range ans.Events {
		fmt.Fprintf(stdout, "verdict: %s (rules %s)\n", e.Verdict, e.Rules)
		if err := printSteps(stdout, e); err != nil {
			return err
		}
	}
	return nil
}

// fetchJSON is the explain endpoint's 200 answer, decoded into v.
func fetchJSON(admin adminClient, method, path string, body []byte, v any) error {
	out, err := admin.do("explain", method, path, body, http.StatusOK)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(out, v); err != nil {
		return fmt.Errorf("explain: answer: %w", err)
	}
	return nil
}

func orEmpty(s, cond string) string {
	if cond == "" {
		return ""
	}
	return s
}

func printSteps(w io.Writer, x judge.Explanation) error {
	u := x.UserAgent
	fmt.Fprintf(w, "reads as: %s on %s (%s); %s\n", u.Browser, u.OS, u.Device, u.Evidence)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tDECISION\tEVIDENCE")
	for _, s := range x.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Rule, s.Decision, s.Evidence)
	}
	return tw.Flush()
}
