package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runSite implements `viewcount site add DOMAIN` against a running server.
func runSite(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "add" {
		return fmt.Errorf("usage: viewcount site add DOMAIN [--server URL] [--admin-token T] [--data DIR]")
	}
	fs := flag.NewFlagSet("viewcount site add", flag.ContinueOnError)
	server := fs.String("server", envOr("VIEWCOUNT_SERVER", "http://127.0.0.1:8080"), "server URL (env VIEWCOUNT_SERVER)")
	token := fs.String("admin-token", os.Getenv("VIEWCOUNT_ADMIN_TOKEN"), "admin token (env VIEWCOUNT_ADMIN_TOKEN); default: read from the data dir")
	data := fs.String("data", envOr("VIEWCOUNT_DATA", "./data"), "data dir holding admin_token (env VIEWCOUNT_DATA)")
	// Go's flag package stops at the first non-flag; accept the domain first
	// or last so `site add example.com --server …` works as typed.
	rest := args[1:]
	var domain string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		domain, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if domain == "" && fs.NArg() == 1 {
		domain = fs.Arg(0)
	} else if fs.NArg() > 0 || domain == "" {
		return fmt.Errorf("usage: viewcount site add DOMAIN [--server URL] [--admin-token T] [--data DIR]")
	}
	if *token == "" {
		b, err := os.ReadFile(filepath.Join(*data, "admin_token"))
		if err != nil {
			return fmt.Errorf("no admin token: pass --admin-token or run next to the server's data dir (%w)", err)
		}
		*token = strings.TrimSpace(string(b))
	}
	body, _ := json.Marshal(map[string]string{"domain": domain})
	req, err := http.NewRequest(http.MethodPost, strings.TrimRight(*server, "/")+"/v1/admin/sites", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+*token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("site add: %w", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("site add: %s: %s", resp.Status, strings.TrimSpace(string(out)))
	}
	_, err = fmt.Fprintln(stdout, strings.TrimSpace(string(out)))
	return err
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}
