package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

const siteUsage = `usage:
  viewcount site add DOMAIN              register a site, print its token
  viewcount site list [--json]           registered sites: created, time zone, last view, hostnames
  viewcount site hosts DOMAIN [HOST…]    the page hosts the site's views may come from: shown, or set (example.com,
                                         "*.example.com" for its subdomains, "*" for any); others are foreign_origin
  viewcount site rotate DOMAIN [--keep-share]
                                         a new site token; the old one and the site's share link stop working at once
  viewcount site delete DOMAIN --confirm DOMAIN
                                         remove the site and all its data (without --confirm: say what would go)
common flags: [--server URL] [--admin-token-file FILE] [--data DIR]; the admin token: VIEWCOUNT_ADMIN_TOKEN, the file, else DIR/admin_token`

// runSite implements `viewcount site add|list|rotate|delete|hosts` against a
// running server's admin API.
func runSite(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(siteUsage)
	}
	cmd := args[0]
	fs := flag.NewFlagSet("viewcount site "+cmd, flag.ContinueOnError)
	af := adminFlags(fs)
	var jsonOut *bool
	var confirm *string
	var keepShare *bool
	wantDomain := true
	switch cmd {
	case "add":
	case "rotate":
		keepShare = fs.Bool("keep-share", false, "keep the site's share link working (by default it is revoked with the old token)")
	case "delete":
		confirm = fs.String("confirm", "", "the site's name again: deletes it and all its data")
	case "list":
		jsonOut = fs.Bool("json", false, "print the server's JSON answer")
		wantDomain = false
	case "hosts":
	default:
		return errors.New(siteUsage)
	}
	// Go's flag package stops at the first non-flag; accept the domain first
	// or last so `site add example.com --server …` works as typed.
	rest := args[1:]
	var domain string
	if wantDomain && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		domain, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	var hosts []string
	if cmd == "hosts" {
		// Hosts and flags in any order: parse again after each host.
		for fs.NArg() > 0 {
			hosts = append(hosts, fs.Arg(0))
			if err := fs.Parse(fs.Args()[1:]); err != nil {
				return err
			}
		}
		if domain == "" && len(hosts) > 0 {
			domain, hosts = hosts[0], hosts[1:]
		}
	}
	switch {
	case cmd == "hosts":
	case wantDomain && domain == "" && fs.NArg() == 1:
		domain = fs.Arg(0)
	case fs.NArg() > 0 || wantDomain && domain == "":
		return errors.New(siteUsage)
	}
	if wantDomain && domain == "" {
		return errors.New(siteUsage)
	}
	admin, err := af.client("/v1/admin/sites", stderr)
	if err != nil {
		return err
	}
	site := url.PathEscape(domain)
	switch cmd {
	case "add":
		body, _ := json.Marshal(map[string]string{"domain": domain})
		return admin.print(stdout, "site add", http.MethodPost, "", body, http.StatusCreated)
	case "rotate":
		path := "/" + site + "/token"
		if *keepShare {
			path += "?keep_share=true"
		}
		return admin.print(stdout, "site rotate", http.MethodPost, path, nil, http.StatusOK)
	case "hosts":
		if len(hosts) == 0 {
			return admin.print(stdout, "site hosts", http.MethodGet, "/"+site, nil, http.StatusOK)
		}
		body, _ := json.Marshal(map[string][]string{"hostnames": hosts})
		return admin.print(stdout, "site hosts", http.MethodPatch, "/"+site, body, http.StatusOK)
	case "delete":
		if *confirm == "" {
			return admin.previewDelete(site, domain)
		}
		return admin.print(stdout, "site delete", http.MethodDelete, "/"+site+"?confirm="+url.QueryEscape(*confirm), nil, http.StatusOK)
	default: // list
		if *jsonOut {
			return admin.print(stdout, "site list", http.MethodGet, "", nil, http.StatusOK)
		}
		return admin.list(stdout)
	}
}

// adminClient calls the admin API of one server.
type adminClient struct {
	base, token string
}

// request is an admin API request with the token and, with a body, its type.
func (a adminClient) request(what, method, path string, body []byte) (*http.Request, error) {
	req, err := http.NewRequest(method, a.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// do sends the request and returns the answer's body if its status is
// want; any other status is an error quoting the server's answer.
func (a adminClient) do(what, method, path string, body []byte, want int) ([]byte, error) {
	req, err := a.request(what, method, path, body)
	if err != nil {
		return nil, err
	}
	// Deleting a large site's data waits for the store's mutations.
	resp, err := (&http.Client{Timeout: 10 * time.Minute}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != want {
		return out, fmt.Errorf("%s: %s: %s", what, resp.Status, strings.TrimSpace(string(out)))
	}
	return out, nil
}

// print writes the answer's JSON, one line, as `site add` always has.
func (a adminClient) print(w io.Writer, what, method, path string, body []byte, want int) error {
	out, err := a.do(what, method, path, body, want)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, strings.TrimSpace(string(out)))
	return err
}

// previewDelete asks the server what deleting the site would remove (a
// DELETE without confirm deletes nothing) and returns that as the error.
func (a adminClient) previewDelete(path, domain string) error {
	out, err := a.do("site delete", http.MethodDelete, "/"+path, nil, http.StatusBadRequest)
	if err != nil {
		return err
	}
	var preview struct {
		WouldDelete map[string]uint64 `json:"would_delete"`
	}
	if err := json.Unmarshal(out, &preview); err != nil {
		return fmt.Errorf("site delete: answer %q: %w", out, err)
	}
	tables := make([]string, 0, len(preview.WouldDelete))
	for t, n := range preview.WouldDelete {
		tables = append(tables, fmt.Sprintf("%s %d", t, n))
	}
	sort.Strings(tables)
	return fmt.Errorf("site delete: not deleted; this removes %s from the registry and its rows (%s); pass --confirm %s to delete it",
		domain, strings.Join(tables, ", "), domain)
}

// list prints the sites as a table.
func (a adminClient) list(w io.Writer) error {
	out, err := a.do("site list", http.MethodGet, "", nil, http.StatusOK)
	if err != nil {
		return err
	}
	var ans struct {
		Sites []struct {
			Site      string   `json:"site"`
			Created   string   `json:"created"`
			Timezone  string   `json:"timezone"`
			Shared    bool     `json:"shared"`
			LastView  *string  `json:"last_view"`
			Hostnames []string `json:"hostnames"`
		} `json:"sites"`
	}
	if err := json.Unmarshal(out, &ans); err != nil {
		return fmt.Errorf("site list: answer: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SITE\tCREATED\tTIMEZONE\tLAST VIEW\tSHARE LINK\tHOSTNAMES")
	for _, s := range ans.Sites {
		last, shared := "never", "no"
		if s.LastView != nil {
			last = *s.LastView
		}
		if s.Shared {
			shared = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Site, s.Created, s.Timezone, last, shared, strings.Join(s.Hostnames, " "))
	}
	return tw.Flush()
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
