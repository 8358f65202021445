package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// runHealth is `viewcount health [URL]`, the container image's health
// check: the image has no shell and no HTTP client (distroless), so the
// binary asks its own process. It GETs URL (default: /readyz on the
// address VIEWCOUNT_LISTEN names, on loopback) and succeeds on 200 only;
// the answer, which names every failing part, is printed either way so
// `docker inspect` shows why a container is unhealthy.
func runHealth(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("viewcount health", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return fmt.Errorf("health: want at most one URL, got %v", fs.Args())
	}
	url := fs.Arg(0)
	if url == "" {
		listen := ":8080"
		if v, ok := os.LookupEnv("VIEWCOUNT_LISTEN"); ok {
			listen = v
		}
		u, err := readyURL(listen)
		if err != nil {
			return err
		}
		url = u
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("health: URL %q: %w", url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	// Docker keeps 4 KiB of a probe's output; /readyz answers far less.
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if err != nil {
		return fmt.Errorf("health: read %s: %w", url, err)
	}
	fmt.Fprintln(stdout, strings.TrimSpace(string(body)))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s answered %s", url, resp.Status)
	}
	return nil
}

// readyURL is the /readyz URL of a process listening on listen (":8080",
// "0.0.0.0:8080", "[::]:8080", "10.0.0.5:8080"), reached on loopback when
// it listens on every address.
func readyURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" || port == "0" {
		return "", fmt.Errorf("health: VIEWCOUNT_LISTEN %q: want host:port with a fixed port (or give the URL)", listen)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}
